//! Progress reports of a pass (`Common::progress`, what `--output-progress` and the terminal
//! bar show): about every hundredth of the range, in time order, inside the range, and one
//! end report with every event read, whatever the analyses leave out of the read.

use std::sync::{Arc, Mutex};

use analysis::{Common, Options, Progress, ProgressPoint};

#[derive(Default)]
struct Recorder {
    points: Mutex<Vec<ProgressPoint>>,
    done: Mutex<Vec<u64>>,
}

impl Progress for Recorder {
    fn at(&self, p: ProgressPoint) {
        self.points.lock().unwrap().push(p);
    }

    fn done(&self, events: u64) {
        self.done.lock().unwrap().push(events);
    }
}

/// Runs `names` over `traces` with a recorder; returns it and the analysed range.
fn run(
    traces: &[Arc<ctf::Trace>],
    names: &[&str],
    common: Common,
) -> (Arc<Recorder>, analysis::Range) {
    let rec = Arc::new(Recorder::default());
    let common = Common {
        progress: Some(rec.clone()),
        ..common
    };
    let done = analysis::run_names(
        traces,
        names,
        &common,
        &Options::default(),
        None,
        &mut |_, _| {},
    )
    .expect("analysed");
    (rec, done.range)
}

#[test]
fn reports_cover_the_range_in_order_and_end_with_every_event() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    testkit::kernel_mix(&dir, 30_000, 2, 11);
    let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
    let total: u64 = {
        let mut m = ctf::Merger::new(&traces);
        let mut n = 0;
        while let Some(msg) = m.next() {
            n += matches!(msg, ctf::Message::Event) as u64;
        }
        n
    };
    // cputop leaves most events out of the read; --read-every-event reads them all.
    for (names, every) in [
        (&["cputop"][..], false),
        (&["cputop", "irqstats"][..], true),
    ] {
        let common = Common {
            read_every_event: every,
            no_intersection: true,
            ..Default::default()
        };
        let (rec, range) = run(&traces, names, common);
        let points = rec.points.lock().unwrap().clone();
        assert!(
            (50..=110).contains(&points.len()),
            "{names:?}: {} reports for a hundredth each",
            points.len()
        );
        assert_eq!(points[0].ts, range.begin);
        assert_eq!(points[0].fraction(), 0.0);
        for w in points.windows(2) {
            assert!(w[0].ts < w[1].ts && w[0].events <= w[1].events, "{w:?}");
            assert!(w[0].fraction() <= w[1].fraction());
        }
        for p in &points {
            assert!(p.begin <= p.ts && p.ts <= p.end, "{p:?}");
            assert!(p.ts <= range.end);
        }
        // The generated streams end with their last events.
        let last = points.last().unwrap();
        assert!(last.fraction() > 0.97, "{last:?}");
        assert_eq!(*rec.done.lock().unwrap(), vec![total], "{names:?}");
    }
}

#[test]
fn a_bounded_range_reports_from_its_first_event_to_its_end() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    testkit::kernel_mix(&dir, 20_000, 2, 12);
    let traces = ctf::open_all(std::slice::from_ref(&dir)).unwrap();
    let (_, whole) = run(&traces, &["cputop"], Common::default());
    let span = whole.end - whole.begin;
    let (b, e) = (whole.begin + span / 3, whole.begin + 2 * span / 3);
    let common = Common {
        begin: Some(b),
        end: Some(e),
        ..Default::default()
    };
    let (rec, range) = run(&traces, &["cputop"], common);
    let points = rec.points.lock().unwrap().clone();
    assert!(points.iter().all(|p| p.begin == range.begin && p.end == e));
    assert!(points.iter().all(|p| (b..=e).contains(&p.ts)));
    assert!(points.len() >= 50, "{}", points.len());
    // The read stops at the first event past the end: done once.
    assert_eq!(rec.done.lock().unwrap().len(), 1);
}

#[test]
fn a_point_past_its_range_is_complete() {
    let point = |ts, begin, end| ProgressPoint {
        ts,
        begin,
        end,
        events: 0,
    };
    assert_eq!(point(30, 10, 20).fraction(), 1.0);
    assert_eq!(point(10, 10, 10).fraction(), 1.0);
    assert_eq!(point(5, 10, 20).fraction(), 0.0);
    assert!((point(0, i64::MIN, i64::MAX).fraction() - 0.5).abs() < 1e-9);
}
