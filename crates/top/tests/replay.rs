//! `top::replay::Replay`: a trace read at its recorded pace (times the speed), and stopped
//! early by its quit flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctf::Event;
use pipeline::{FileSource, Flow, ReadOptions, Sink, Source};
use top::replay::Replay;

/// The first and last times, and the events given.
#[derive(Default)]
struct Span(Option<i64>, i64, u64);

impl Sink for Span {
    fn event(&mut self, _ev: &Event<'_>, ts: i64) -> Flow {
        self.0.get_or_insert(ts);
        self.1 = ts;
        self.2 += 1;
        Flow::Continue
    }
}

#[test]
fn paced_and_quit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    scenario::kernel_mix::generate(
        &dir,
        &scenario::kernel_mix::KernelMixParams {
            events: 20_000,
            cpus: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let open = || FileSource::open(&[&dir], ReadOptions::default()).unwrap();
    let mut all = Span::default();
    open().run(&mut all);
    let length = (all.1 - all.0.unwrap()) as f64 / 1e9;
    // Slowed down to about half a second of replay.
    let speed = length / 0.5;
    let quit = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let mut paced = Span::default();
    let summary = Replay::new(open(), speed, quit.clone()).run(&mut paced);
    let took = start.elapsed().as_secs_f64();
    assert_eq!(paced.2, all.2, "every event");
    assert!(!summary.stopped);
    // Its last event is due at length / speed; it is given within a pacing step of it.
    assert!(took >= 0.5 - 0.011, "replayed in {took} s");

    // Quit: the read stops at the next step, long before its end.
    let slow = Replay::new(open(), length / 30.0, quit.clone());
    let q = quit.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        q.store(true, Ordering::Relaxed);
    });
    let start = Instant::now();
    let mut cut = Span::default();
    let summary = slow.run(&mut cut);
    assert!(summary.stopped);
    assert!(cut.2 < all.2);
    assert!(start.elapsed() < Duration::from_secs(5));
}
