//! Time-ordered k-way merge of many streams (of one or several traces).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::Error;
use crate::stream::{Event, Message, StreamReader};
use crate::trace::Trace;

/// Maps a trace's timestamps (ns from its clock origin) to the merged time line.
pub trait TimeMap: Send + Sync {
    fn map(&self, trace: usize, ns: i64) -> i64;
}

/// A merged sequence of messages from many streams, ordered by time. Ties are broken by trace
/// order, then stream order, so the output is deterministic.
pub struct Merger {
    readers: Vec<StreamReader>,
    /// (time, reader) of every reader with a pending message; the current one stays on top
    /// until the next call, which replaces its key in place (one sift instead of pop + push).
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// The current message: its reader, the message and its merged time.
    current: Option<(usize, Message, i64)>,
    started: bool,
    time_map: Option<Arc<dyn TimeMap>>,
    pending_msgs: Vec<Option<Message>>,
    /// Errors met so far (each names its file and offset). Reading goes on after them.
    pub errors: Vec<Error>,
}

impl Merger {
    /// A merger over every stream of the given traces.
    pub fn new(traces: &[Arc<Trace>]) -> Self {
        let readers = traces.iter().flat_map(|t| t.readers()).collect();
        Merger {
            readers,
            heap: BinaryHeap::new(),
            current: None,
            started: false,
            time_map: None,
            pending_msgs: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Applies a clock transformation to every timestamp before ordering.
    pub fn with_time_map(mut self, map: Arc<dyn TimeMap>) -> Self {
        self.time_map = Some(map);
        self
    }

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

    /// The next message of reader `i` and its merged time; errors met on the way are kept.
    fn fetch(&mut self, i: usize) -> Option<(i64, Message)> {
        loop {
            match self.readers[i].next() {
                None => return None,
                Some(Ok(msg)) => return Some((self.time_of(i, &msg), msg)),
                Some(Err(e)) => self.errors.push(e),
            }
        }
    }

    /// Moves to the next message in time order.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&Message> {
        if !self.started {
            self.started = true;
            self.pending_msgs = vec![None; self.readers.len()];
            for i in 0..self.readers.len() {
                if let Some((t, msg)) = self.fetch(i) {
                    self.pending_msgs[i] = Some(msg);
                    self.heap.push(Reverse((t, i)));
                }
            }
        } else if let Some((i, _, _)) = self.current.take() {
            // Reader `i` is on top of the heap.
            match self.fetch(i) {
                Some((t, msg)) => {
                    self.pending_msgs[i] = Some(msg);
                    if let Some(mut top) = self.heap.peek_mut() {
                        *top = Reverse((t, i));
                    }
                }
                None => {
                    self.heap.pop();
                }
            }
        }
        let &Reverse((t, i)) = self.heap.peek()?;
        let msg = self.pending_msgs[i]
            .take()
            .expect("queued reader has a message");
        self.current = Some((i, msg, t));
        self.current.as_ref().map(|(_, m, _)| m)
    }

    /// The current event (after `next` returned `Message::Event`).
    pub fn event(&self) -> Option<Event<'_>> {
        match &self.current {
            Some((i, Message::Event, _)) => Some(self.readers[*i].event()),
            _ => None,
        }
    }

    /// The time of the current message on the merged time line.
    pub fn current_time(&self) -> Option<i64> {
        let &(_, _, t) = self.current.as_ref()?;
        (t != i64::MIN).then_some(t)
    }

    /// The stream reader that produced the current message.
    pub fn current_reader(&self) -> Option<&StreamReader> {
        self.current.as_ref().map(|(i, _, _)| &self.readers[*i])
    }

    /// Every reader (for warnings and counters).
    pub fn readers(&self) -> &[StreamReader] {
        &self.readers
    }
}
