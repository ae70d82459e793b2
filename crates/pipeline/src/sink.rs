//! What consumers of the event stream implement.

use ctf::{Event, Trace};

use crate::diagnostic::Diagnostic;
use crate::source::Summary;

/// Whether the read goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on reading.
    Continue,
    /// Stop: the sink has what it needs (the source then calls [`Sink::finish`]).
    Stop,
}

/// Per stream class position, per event class position of one trace: whether a sink needs
/// the events of the class. None: every event.
pub type Wanted = Option<Vec<Vec<bool>>>;

/// The kind of a [`Notice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// The tracer discarded events (its ring buffer was full).
    DiscardedEvents,
    /// Packets are missing (a gap in the packets' sequence numbers).
    DiscardedPackets,
}

/// Events or packets lost between two times, in merged order with the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    /// What was lost.
    pub kind: NoticeKind,
    /// How many.
    pub count: u64,
    /// The time (ns, the read's time line) the loss is placed at, when known.
    pub ts: Option<i64>,
    /// The trace (its index among the inputs) and its stream.
    pub trace: usize,
    /// The stream index in the trace.
    pub stream: usize,
}

/// A consumer of the time-ordered event stream.
pub trait Sink {
    /// The event classes this sink needs from `trace` (see [`Wanted`]); the source leaves
    /// out the others when no other sink needs them. Every event by default.
    fn wanted(&self, _trace: &Trace) -> Wanted {
        None
    }

    /// Whether the sink wants [`Notice`]s of discarded events and packets (a sink that does
    /// not spares the source the work of delivering them).
    fn wants_notices(&self) -> bool {
        false
    }

    /// An event at `ts` (ns on the read's time line).
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow;

    /// Events or packets were lost (only when [`Sink::wants_notices`]).
    fn notice(&mut self, _notice: &Notice) -> Flow {
        Flow::Continue
    }

    /// A problem met while reading: delivered at the end of the read, before
    /// [`Sink::finish`].
    fn diagnostic(&mut self, _diagnostic: &Diagnostic) {}

    /// The source gave everything it has for now and waits for more (a live source between
    /// the relay's packets; files never wait): a sink writing output flushes it here, one
    /// showing a report may refresh it. The read goes on unless it returns [`Flow::Stop`].
    fn caught_up(&mut self) -> Flow {
        Flow::Continue
    }

    /// The read is over.
    fn finish(&mut self, _summary: &Summary) {}
}

/// A sink behind a pointer is the sink.
macro_rules! forward_sink {
    ($($ptr:ty),*) => {$(
        impl<S: Sink + ?Sized> Sink for $ptr {
            fn wanted(&self, trace: &Trace) -> Wanted {
                (**self).wanted(trace)
            }
            fn wants_notices(&self) -> bool {
                (**self).wants_notices()
            }
            #[inline(always)]
            fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
                (**self).event(ev, ts)
            }
            fn notice(&mut self, notice: &Notice) -> Flow {
                (**self).notice(notice)
            }
            fn diagnostic(&mut self, diagnostic: &Diagnostic) {
                (**self).diagnostic(diagnostic)
            }
            fn caught_up(&mut self) -> Flow {
                (**self).caught_up()
            }
            fn finish(&mut self, summary: &Summary) {
                (**self).finish(summary)
            }
        }
    )*};
}

forward_sink!(&mut S, Box<S>);

/// The union of two wanted tables (None wants everything).
pub fn union_wanted(a: Wanted, b: Wanted) -> Wanted {
    let (mut a, b) = (a?, b?);
    for (ra, rb) in a.iter_mut().zip(&b) {
        for (x, y) in ra.iter_mut().zip(rb) {
            *x |= *y;
        }
        if rb.len() > ra.len() {
            ra.extend_from_slice(&rb[ra.len()..]);
        }
    }
    if b.len() > a.len() {
        a.extend_from_slice(&b[a.len()..]);
    }
    Some(a)
}

/// Several sinks fed by one read, in order; the read stops when every sink stopped.
pub struct Fanout<'a> {
    sinks: Vec<(Box<dyn Sink + 'a>, bool)>,
}

impl<'a> Fanout<'a> {
    /// Feeds `sinks` in this order.
    pub fn new(sinks: Vec<Box<dyn Sink + 'a>>) -> Self {
        Fanout {
            sinks: sinks.into_iter().map(|s| (s, true)).collect(),
        }
    }

    /// The sinks back, for their results.
    pub fn into_inner(self) -> Vec<Box<dyn Sink + 'a>> {
        self.sinks.into_iter().map(|(s, _)| s).collect()
    }
}

impl Sink for Fanout<'_> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        let mut it = self.sinks.iter().map(|(s, _)| s.wanted(trace));
        let first = it.next()?;
        it.fold(first, union_wanted)
    }
    fn wants_notices(&self) -> bool {
        self.sinks.iter().any(|(s, _)| s.wants_notices())
    }
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        let mut any = false;
        for (s, live) in self.sinks.iter_mut().filter(|(_, live)| *live) {
            *live = s.event(ev, ts) == Flow::Continue;
            any |= *live;
        }
        if any {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
    fn notice(&mut self, notice: &Notice) -> Flow {
        let mut any = false;
        for (s, live) in self.sinks.iter_mut().filter(|(_, live)| *live) {
            if s.wants_notices() {
                *live = s.notice(notice) == Flow::Continue;
            }
            any |= *live;
        }
        if any {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        for (s, _) in &mut self.sinks {
            s.diagnostic(diagnostic);
        }
    }
    fn caught_up(&mut self) -> Flow {
        let mut any = false;
        for (s, live) in self.sinks.iter_mut().filter(|(_, live)| *live) {
            *live = s.caught_up() == Flow::Continue;
            any |= *live;
        }
        if any {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
    fn finish(&mut self, summary: &Summary) {
        for (s, _) in &mut self.sinks {
            s.finish(summary);
        }
    }
}

/// Two sinks fed by one read, the first first; the read stops when both stopped. Unlike
/// [`Fanout`], the pair is generic: each sink's calls are inlined into the read loop.
pub struct Both<A, B> {
    /// The first sink.
    pub first: A,
    /// The second sink.
    pub second: B,
    live: (bool, bool),
}

impl<A: Sink, B: Sink> Both<A, B> {
    /// Feeds `first`, then `second`, with each event.
    pub fn new(first: A, second: B) -> Self {
        Both {
            first,
            second,
            live: (true, true),
        }
    }

    fn flow(&self) -> Flow {
        if self.live.0 || self.live.1 {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
}

impl<A: Sink, B: Sink> Sink for Both<A, B> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        union_wanted(self.first.wanted(trace), self.second.wanted(trace))
    }
    fn wants_notices(&self) -> bool {
        self.first.wants_notices() || self.second.wants_notices()
    }
    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        if self.live.0 {
            self.live.0 = self.first.event(ev, ts) == Flow::Continue;
        }
        if self.live.1 {
            self.live.1 = self.second.event(ev, ts) == Flow::Continue;
        }
        self.flow()
    }
    fn notice(&mut self, notice: &Notice) -> Flow {
        if self.live.0 && self.first.wants_notices() {
            self.live.0 = self.first.notice(notice) == Flow::Continue;
        }
        if self.live.1 && self.second.wants_notices() {
            self.live.1 = self.second.notice(notice) == Flow::Continue;
        }
        self.flow()
    }
    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        self.first.diagnostic(diagnostic);
        self.second.diagnostic(diagnostic);
    }
    fn caught_up(&mut self) -> Flow {
        if self.live.0 {
            self.live.0 = self.first.caught_up() == Flow::Continue;
        }
        if self.live.1 {
            self.live.1 = self.second.caught_up() == Flow::Continue;
        }
        self.flow()
    }
    fn finish(&mut self, summary: &Summary) {
        self.first.finish(summary);
        self.second.finish(summary);
    }
}
