//! The dashboard drawn on ratatui's `TestBackend`: a fixed snapshot against its insta
//! snapshot, and the snapshot of a generated trace checked for what it must show.

use std::collections::BTreeMap;

use analysis::Range;
use latency::{Counters, Report, Tracker, TrackerSummary};
use pipeline::{FileSource, Flow, ReadOptions};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use top::render::{draw, fmt_ns, View};
use top::{Config, LatencyView, Snapshot, ThreadUsage};

/// The screen's text, one line per row (trailing blanks cut).
fn screen(view: &View, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, view)).unwrap();
    let buf = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            let line: String = (0..width).map(|x| buf[(x, y)].symbol()).collect();
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(tracker: Tracker, matched: u64, hist: Vec<(i64, u64)>) -> TrackerSummary {
    TrackerSummary {
        tracker,
        counters: Counters {
            matched,
            ..Default::default()
        },
        pending: 0,
        min: Some(hist.first().map_or(0, |h| h.0.max(100))),
        avg: Some(5_000.0),
        max: Some(hist.last().map_or(0, |h| h.0 * 2 - 1)),
        hist,
    }
}

fn fixed() -> Snapshot {
    let t0 = 1_700_000_000_000_000_000;
    let report = |tracker, latency, tid: Option<i32>, comm: Option<&str>, detail: &str| Report {
        tracker,
        begin: t0 + 250_000_000,
        end: t0 + 250_000_000 + latency,
        latency,
        timeout: false,
        timed_out: false,
        tid,
        comm: comm.map(String::from),
        cpu: Some(1),
        waker: None,
        detail: detail.into(),
    };
    Snapshot {
        range: Range {
            begin: t0 + 1_000_000_000,
            end: t0 + 2_000_000_000,
        },
        first: t0,
        last: false,
        threads: vec![
            ThreadUsage {
                tid: 1234,
                comm: "postgres".into(),
                usage: 0.625,
            },
            ThreadUsage {
                tid: 77,
                comm: "kworker/1:2".into(),
                usage: 0.125,
            },
        ],
        cpus: vec![(0, 0.75), (1, 0.3125)],
        total: 0.53125,
        latencies: vec![
            LatencyView {
                total: summary(
                    Tracker::Syscall,
                    300,
                    vec![(1024, 200), (2048, 90), (65536, 10)],
                ),
                window_matched: 30,
                window_hist: vec![(1024, 30)],
            },
            LatencyView {
                total: summary(Tracker::Block, 12, vec![(131072, 8), (1048576, 4)]),
                window_matched: 2,
                window_hist: vec![(131072, 2)],
            },
        ],
        worst: vec![
            report(
                Tracker::Block,
                2_500_000,
                Some(1234),
                Some("postgres"),
                "dev 8:0 sector 2048 (8 sectors)",
            ),
            report(
                Tracker::Syscall,
                1_200_000,
                Some(77),
                Some("kworker/1:2"),
                "read",
            ),
        ],
        window_over: 1,
        total_over: 2,
    }
}

#[test]
fn fixed_snapshot_renders() {
    let config = Config {
        trackers: vec![Tracker::Syscall, Tracker::Block],
        thresholds: BTreeMap::from([(Tracker::Block, 2_000_000)]),
        ..Default::default()
    };
    let mut view = View::new("trace/kernel", &config);
    view.status = "replay ×1".into();
    view.snapshot = Some(fixed());
    insta::assert_snapshot!(screen(&view, 110, 34));
}

#[test]
fn waiting_before_the_first_window() {
    let view = View::new("recording to x/kernel", &Config::default());
    let s = screen(&view, 80, 10);
    assert!(s.contains("recording to x/kernel"));
    assert!(s.contains("waiting for the first window"));
}

#[test]
fn a_generated_trace_shows_its_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    scenario::kernel_mix::generate(
        &dir,
        &scenario::kernel_mix::KernelMixParams {
            events: 30_000,
            cpus: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let config = Config {
        threshold: 20_000,
        ..Default::default()
    };
    let source = FileSource::open(&[&dir], ReadOptions::default()).unwrap();
    let mut snaps = Vec::new();
    top::run(&source, &config, |s| {
        snaps.push(s);
        Flow::Continue
    })
    .unwrap();
    let snap = snaps.pop().unwrap();
    assert!(snap.last);
    assert!(!snap.threads.is_empty() && !snap.worst.is_empty());
    let mut view = View::new(dir.display().to_string(), &config);
    view.snapshot = Some(snap.clone());
    let s = screen(&view, 140, 50);
    // The busiest threads, each CPU's load, each tracker, the worst occurrence.
    for t in snap.threads.iter().take(5) {
        assert!(s.contains(&t.comm), "{} missing:\n{s}", t.comm);
        assert!(s.contains(&format!("{:.1}%", t.usage * 100.0)));
    }
    for (cpu, u) in &snap.cpus {
        assert!(s.contains(&format!("cpu{cpu}")));
        assert!(s.contains(&format!("{:.1}%", u * 100.0)));
    }
    for l in &snap.latencies {
        assert!(s.contains(&format!("{} latency", l.total.tracker.name())));
        assert!(s.contains(&format!("{} total", l.total.counters.matched)));
    }
    let w = &snap.worst[0];
    assert!(s.contains(&fmt_ns(w.latency)));
    assert!(s.contains(&w.detail) || w.detail.is_empty());
}
