//! A recorded trace replayed at its recorded pace (or `speed` times it): a [`Source`] that
//! gives another source's events no sooner than their time, counted from the first event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctf::{Event, Trace};
use pipeline::{Diagnostic, Flow, Notice, Sink, Source, Summary, Wanted};

/// How much trace time passes between two looks at the clock (ns of trace time, times the
/// speed): the pacing costs one comparison per event.
const STEP_NS: f64 = 10_000_000.0;

/// `inner`'s events, paced (see the [module](self)).
pub struct Replay<S> {
    inner: S,
    speed: f64,
    quit: Arc<AtomicBool>,
}

impl<S: Source> Replay<S> {
    /// Replays `inner` at `speed` times the recorded pace (a speed that is not a positive
    /// number replays at once). The read stops at the next step once `quit` is set.
    pub fn new(inner: S, speed: f64, quit: Arc<AtomicBool>) -> Self {
        Replay { inner, speed, quit }
    }
}

/// The pacing sink around the consumer's.
struct Paced<'s, S: ?Sized> {
    sink: &'s mut S,
    speed: f64,
    quit: &'s AtomicBool,
    start: Instant,
    first: Option<i64>,
    /// The next trace time at which the clock is looked at.
    next: i64,
}

impl<S: Sink + ?Sized> Paced<'_, S> {
    /// Waits until `ts` is due (in short sleeps, to see `quit`); Stop once it is set.
    #[cold]
    #[inline(never)]
    fn pace(&mut self, ts: i64) -> Flow {
        let first = *self.first.get_or_insert(ts);
        let step = (STEP_NS * self.speed).max(1.0) as i64;
        self.next = ts.saturating_add(step);
        let due = Duration::from_secs_f64(((ts - first) as f64 / 1e9 / self.speed).max(0.0));
        loop {
            if self.quit.load(Ordering::Relaxed) {
                return Flow::Stop;
            }
            let now = self.start.elapsed();
            if now >= due {
                return Flow::Continue;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
        }
    }
}

impl<S: Sink + ?Sized> Sink for Paced<'_, S> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        self.sink.wanted(trace)
    }
    fn wants_notices(&self) -> bool {
        self.sink.wants_notices()
    }
    #[inline(always)]
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        if ts >= self.next && self.pace(ts) == Flow::Stop {
            return Flow::Stop;
        }
        self.sink.event(ev, ts)
    }
    fn notice(&mut self, notice: &Notice) -> Flow {
        self.sink.notice(notice)
    }
    fn diagnostic(&mut self, d: &Diagnostic) {
        self.sink.diagnostic(d)
    }
    fn finish(&mut self, summary: &Summary) {
        self.sink.finish(summary)
    }
}

impl<S: Source> Source for Replay<S> {
    fn traces(&self) -> &[Arc<Trace>] {
        self.inner.traces()
    }

    fn run<K: Sink + ?Sized>(&self, sink: &mut K) -> Summary {
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return self.inner.run(sink);
        }
        let mut paced = Paced {
            sink,
            speed: self.speed,
            quit: &self.quit,
            start: Instant::now(),
            first: None,
            next: i64::MIN,
        };
        self.inner.run(&mut paced)
    }
}
