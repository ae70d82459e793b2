//! `pipeline::parallel::run` against a plain merge: the items come in the merge's order, and
//! batches cycle between the workers and the merge, the merge's placeholders never among them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ctf::{Merger, Message, StreamReader, Trace};
use pipeline::parallel::{self, Batch, Filled, StreamTime, StreamWork};
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

/// A stream's event times, a batch at a time.
struct Work {
    r: StreamReader,
    time: StreamTime,
}

impl StreamWork<Times> for Work {
    type Output = ();

    fn fill(mut self, batch: &mut Times) -> Filled<Work, ()> {
        while let Some(m) = self.r.next() {
            if let Ok(Message::Event) = m {
                let ev = self.r.event();
                batch
                    .items
                    .push((self.time.of(ev.time_ns()), ev.stream_index()));
            }
            if batch.is_full() {
                return Filled::More(self);
            }
        }
        Filled::Done(())
    }

    fn stop(self) {}
}

#[test]
fn items_come_in_merge_order_through_recycled_batches() {
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

    let options = ReadOptions {
        no_intersection: true,
        ..Default::default()
    };
    let mut got = Vec::new();
    let consumer = |b: &mut Times, i: usize, _t: i64| {
        got.push(b.items[i]);
        Flow::Continue
    };
    let work = |r: StreamReader, time: StreamTime| Work { r, time };
    let (_, merged, _) = parallel::run(&traces, &options, work, consumer);
    assert_eq!(merged.items, want.len() as u64);
    assert_eq!(got, want);
    assert_eq!(PLACEHOLDERS_REUSED.load(Ordering::Relaxed), 0);
    // Thousands of batches went through; at most six per stream were ever allocated (the
    // one merged, four waiting for it, the one filled).
    let made = MADE.load(Ordering::Relaxed);
    let streams = traces.iter().map(|t| t.readers().len()).sum::<usize>();
    assert!(
        made <= 6 * streams,
        "{made} batches made for {streams} streams"
    );
}
