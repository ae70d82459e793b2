//! `pipeline::parallel::run` against a plain merge: the items come in the merge's order, and
//! batches cycle between the workers and the merge, the merge's placeholders never among them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ctf::{Merger, Message, StreamReader, Trace};
use pipeline::parallel::{self, Batch, Filled, StreamTime, StreamWork, Threads};
use pipeline::{Flow, ReadOptions};

/// Batches made full-size ([`Batch::new`]) and placeholders handed back to a worker.
static MADE: AtomicUsize = AtomicUsize::new(0);
static PLACEHOLDERS_REUSED: AtomicUsize = AtomicUsize::new(0);

/// Few items per batch, so that a stream goes through many of them.
const ITEMS: usize = 7;

/// Event times and their stream, a batch at a time.
struct Times {
    items: Vec<(i64, usize)>,
    placeholder: bool,
}

impl Batch for Times {
    fn new() -> Times {
        MADE.fetch_add(1, Ordering::Relaxed);
        Times {
            items: Vec::with_capacity(ITEMS),
            placeholder: false,
        }
    }

    fn placeholder() -> Times {
        Times {
            items: Vec::new(),
            placeholder: true,
        }
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn time(&self, i: usize) -> i64 {
        self.items[i].0
    }

    fn is_full(&self) -> bool {
        self.items.len() >= ITEMS
    }

    fn clear(&mut self) {
        // Called on every batch a worker gets back.
        if self.placeholder {
            PLACEHOLDERS_REUSED.fetch_add(1, Ordering::Relaxed);
        }
        self.items.clear();
    }
}

/// Counts a stream's items, a batch at a time; panics at its `panic_at`th batch if any.
struct Counting {
    r: StreamReader,
    time: StreamTime,
    items: usize,
    batches: usize,
    panic_at: Option<usize>,
}

impl StreamWork<Times> for Counting {
    /// Items read, and whether the stream was read to its end.
    type Output = (usize, bool);

    fn fill(mut self, batch: &mut Times) -> Filled<Counting, (usize, bool)> {
        self.batches += 1;
        if self.panic_at == Some(self.batches) {
            panic!("stream work failed on purpose");
        }
        while let Some(m) = self.r.next() {
            if let Ok(Message::Event) = m {
                let ev = self.r.event();
                batch
                    .items
                    .push((self.time.of(ev.time_ns()), ev.stream_index()));
                self.items += 1;
            }
            if batch.is_full() {
                return Filled::More(self);
            }
        }
        Filled::Done((self.items, true))
    }

    fn stop(self) -> (usize, bool) {
        (self.items, false)
    }
}

/// A stream's [`Counting`] work that panics at its `panic_at`th batch, if any.
fn counting(r: StreamReader, time: StreamTime, panic_at: Option<usize>) -> Counting {
    Counting {
        r,
        time,
        items: 0,
        batches: 0,
        panic_at,
    }
}

/// The tests count batches in statics: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A test's 4-stream kernel trace and its events as (time, stream) in the sequential
/// merge's order, the test holding [`SERIAL`] while it lives.
struct Fixture {
    _serial: MutexGuard<'static, ()>,
    _dir: tempfile::TempDir,
    traces: Vec<Arc<Trace>>,
    want: Vec<(i64, usize)>,
}

fn fixture() -> Fixture {
    let serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("km");
    testkit::kernel_mix(&dir, 20_000, 4, 7);
    let traces: Vec<Arc<Trace>> = ctf::open_all(&[dir]).unwrap();
    let mut want = Vec::new();
    let mut m = Merger::new(&traces);
    while let Some(msg) = m.next() {
        if *msg == Message::Event {
            let (Some(ts), Some(ev)) = (m.current_time(), m.event()) else {
                continue;
            };
            want.push((ts, ev.stream_index()));
        }
    }
    assert!(want.len() > 10_000);
    Fixture {
        _serial: serial,
        _dir: tmp,
        traces,
        want,
    }
}

fn every_stream() -> ReadOptions {
    ReadOptions {
        no_intersection: true,
        ..Default::default()
    }
}

#[test]
fn items_come_in_merge_order_through_recycled_batches() {
    let Fixture { traces, want, .. } = &fixture();
    let streams = traces.iter().map(|t| t.readers().len()).sum::<usize>();
    // No helper (the merging thread fills every batch), fewer helpers than streams, as many,
    // more (the extra ones find nothing to do), and the machine's own count.
    for helpers in [0, 1, 2, 3, 8, usize::MAX] {
        let made_before = MADE.load(Ordering::Relaxed);
        let mut got = Vec::new();
        let consumer = |b: &mut Times, i: usize, _t: i64| {
            got.push(b.items[i]);
            Flow::Continue
        };
        let work = |r: StreamReader, time: StreamTime| counting(r, time, None);
        let threads = match helpers {
            usize::MAX => Threads::Cores,
            n => Threads::Helpers(n),
        };
        let (outputs, merged, _) = parallel::run(threads, traces, &every_stream(), work, consumer);
        assert_eq!(outputs.len(), streams);
        assert_eq!(merged.items, want.len() as u64, "{helpers} helpers");
        assert!(!merged.stopped);
        assert_eq!(&got, want, "{helpers} helpers");
        assert_eq!(PLACEHOLDERS_REUSED.load(Ordering::Relaxed), 0);
        // Thousands of batches went through; at most six per stream were ever allocated
        // (the one merged, four waiting for it, the one filled).
        let made = MADE.load(Ordering::Relaxed) - made_before;
        assert!(
            made <= 6 * streams,
            "{made} batches made for {streams} streams with {helpers} helpers"
        );
    }
}

/// A consumer that stops the read: every thread ends, the streams not read to their end say
/// so through [`StreamWork::stop`], and no stream was read far past what was merged.
#[test]
fn a_stopped_read_ends_every_thread() {
    let Fixture { traces, want, .. } = &fixture();
    for helpers in [0, 1, 3] {
        let mut got = 0;
        let consumer = |_: &mut Times, _: usize, _: i64| {
            got += 1;
            if got == 1_000 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        };
        let work = |r: StreamReader, time: StreamTime| counting(r, time, None);
        let (outputs, merged, _) = parallel::run(
            Threads::Helpers(helpers),
            traces,
            &every_stream(),
            work,
            consumer,
        );
        assert!(merged.stopped);
        assert_eq!(merged.items, 1_000);
        assert!(outputs.iter().any(|&(_, ended)| !ended), "{outputs:?}");
        // Each stream read at most its six batches ahead of the merge.
        let read: usize = outputs.iter().map(|&(n, _)| n).sum();
        assert!(
            read < 1_000 + 6 * ITEMS * outputs.len(),
            "{read} items read"
        );
        assert!(read < want.len());
    }
}

/// A stream's work that panics, on the merging thread or a helper: the panic reaches the
/// caller and no thread is left waiting for the stream's batches.
#[test]
fn a_panicking_stream_work_reaches_the_caller() {
    let Fixture { traces, .. } = &fixture();
    for helpers in [0, 1, 3] {
        for panic_at in [1, 5] {
            let work = |r: StreamReader, time: StreamTime| {
                let at = (r.stream_index() == 2).then_some(panic_at);
                counting(r, time, at)
            };
            let consumer = |_: &mut Times, _: usize, _: i64| Flow::Continue;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                parallel::run(
                    Threads::Helpers(helpers),
                    traces,
                    &every_stream(),
                    work,
                    consumer,
                )
            }));
            let payload = run.err().expect("the read should have panicked");
            assert_eq!(
                payload.downcast_ref::<&str>(),
                Some(&"stream work failed on purpose"),
                "{helpers} helpers, batch {panic_at}"
            );
        }
    }
}
