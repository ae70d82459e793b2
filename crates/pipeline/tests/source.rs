//! The file source against a plain merge of the same traces: what sinks receive, in which
//! order, with skipping, ranges, stops, notices and several sinks.

use std::sync::Arc;

use ctf::{Event, Merger, Message, Trace};
use pipeline::{
    classes_where, Both, Fanout, FileSource, Flow, Notice, NoticeKind, ReadOptions, Sink, Source,
    Summary, Wanted,
};
use scenario::chaos::{write_chaos_trace, ChaosOptions};
use scenario::rng::Rng;

/// Every event a sink saw: (time, name, trace, stream), its notices and its summary.
#[derive(Default)]
struct Recorder {
    names: Option<Vec<&'static str>>,
    notices: bool,
    stop_after: Option<usize>,
    events: Vec<(i64, String, usize, usize)>,
    seen_notices: Vec<Notice>,
    finished: Option<Summary>,
}

impl Sink for Recorder {
    fn wanted(&self, trace: &Trace) -> Wanted {
        let names = self.names.clone()?;
        Some(classes_where(trace, |n| names.contains(&n)))
    }
    fn wants_notices(&self) -> bool {
        self.notices
    }
    fn event(&mut self, ev: &Event<'_>, ts: i64) -> Flow {
        self.events.push((
            ts,
            ev.name().to_string(),
            ev.trace().index,
            ev.stream_index(),
        ));
        match self.stop_after {
            Some(n) if self.events.len() >= n => Flow::Stop,
            _ => Flow::Continue,
        }
    }
    fn notice(&mut self, notice: &Notice) -> Flow {
        self.seen_notices.push(*notice);
        Flow::Continue
    }
    fn finish(&mut self, summary: &Summary) {
        self.finished = Some(summary.clone());
    }
}

/// Counts the events it is given, wanting none in particular.
struct Counter<'a>(&'a mut usize);

impl Sink for Counter<'_> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        Some(classes_where(trace, |_| false))
    }
    fn event(&mut self, _ev: &Event<'_>, _ts: i64) -> Flow {
        *self.0 += 1;
        Flow::Continue
    }
}

/// Every event of `traces` by a plain merge: (time, name, trace, stream), and the number of
/// loss messages.
fn merged(traces: &[Arc<Trace>]) -> (Vec<(i64, String, usize, usize)>, usize) {
    let mut m = Merger::new(traces);
    let mut out = Vec::new();
    let mut losses = 0;
    while let Some(msg) = m.next() {
        if *msg != Message::Event {
            losses += 1;
            continue;
        }
        let (Some(ts), Some(ev)) = (m.current_time(), m.event()) else {
            continue;
        };
        out.push((
            ts,
            ev.name().to_string(),
            ev.trace().index,
            ev.stream_index(),
        ));
    }
    (out, losses)
}

/// Whether `part` is `whole` with some elements left out.
fn is_subsequence<T: PartialEq>(part: &[T], whole: &[T]) -> bool {
    let mut it = whole.iter();
    part.iter().all(|p| it.any(|w| w == p))
}

fn every_event() -> ReadOptions {
    ReadOptions {
        no_intersection: true,
        ..Default::default()
    }
}

fn kernel_mix(tmp: &std::path::Path) -> Vec<Arc<Trace>> {
    let dir = tmp.join("km");
    testkit::kernel_mix(&dir, 20_000, 4, 7);
    ctf::open_all(&[dir]).unwrap()
}

#[test]
fn a_sink_gets_the_merged_events_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = kernel_mix(tmp.path());
    let (all, _) = merged(&traces);
    assert!(all.len() > 10_000);
    let mut rec = Recorder::default();
    let summary = FileSource::new(traces, every_event()).run(&mut rec);
    assert_eq!(rec.events, all);
    assert_eq!(summary.events_read, all.len() as u64);
    assert_eq!(summary.last_in_range, None, "nothing was left out");
    assert!(!summary.stopped);
    assert!(summary.errors.is_empty());
    assert_eq!(rec.finished.unwrap().events_read, summary.events_read);
}

#[test]
fn unwanted_classes_are_left_out_and_the_rest_is_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = kernel_mix(tmp.path());
    let (all, _) = merged(&traces);
    let names = vec!["sched_switch", "irq_handler_entry"];
    let expected: Vec<_> = all
        .iter()
        .filter(|e| names.contains(&e.1.as_str()))
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < all.len());
    let mut rec = Recorder {
        names: Some(names),
        ..Default::default()
    };
    let summary = FileSource::new(traces, every_event()).run(&mut rec);
    // The readers may still give the first event of a class they leave out: the wanted
    // events are all there, in order, and the rest is a small part of the trace, in order.
    let wanted: Vec<_> = rec
        .events
        .iter()
        .filter(|e| expected.contains(e))
        .cloned()
        .collect();
    assert!(
        wanted == expected,
        "the wanted events differ from a full read's"
    );
    assert!(is_subsequence(&rec.events, &all));
    assert!(rec.events.len() < all.len() / 2);
    // The last event of the range a full read gives, though it may be left out.
    assert_eq!(summary.last_in_range, all.last().map(|e| e.0));
    // Every event was still read (errors and counters are a full read's), fewer handed over.
    assert_eq!(summary.events_read, all.len() as u64);
}

#[test]
fn the_range_and_a_stopping_sink_end_the_read() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = kernel_mix(tmp.path());
    let (all, _) = merged(&traces);
    let (b, e) = (all[all.len() / 4].0, all[all.len() / 2].0);
    let mut rec = Recorder::default();
    FileSource::new(
        traces.clone(),
        ReadOptions {
            begin: Some(b),
            end: Some(e),
            no_intersection: true,
            ..Default::default()
        },
    )
    .run(&mut rec);
    let expected: Vec<_> = all
        .iter()
        .filter(|x| x.0 >= b && x.0 <= e)
        .cloned()
        .collect();
    assert_eq!(rec.events, expected);

    let mut stop = Recorder {
        stop_after: Some(100),
        ..Default::default()
    };
    let summary = FileSource::new(traces, every_event()).run(&mut stop);
    assert!(summary.stopped);
    assert_eq!(stop.events, all[..100]);
}

#[test]
fn two_sinks_share_one_read() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = kernel_mix(tmp.path());
    let (all, _) = merged(&traces);
    let switches = || Recorder {
        names: Some(vec!["sched_switch"]),
        ..Default::default()
    };
    let early = Recorder {
        stop_after: Some(10),
        ..Default::default()
    };
    // One sink wants everything: both get every event until they stop.
    let mut both = Both::new(switches(), early);
    FileSource::new(traces.clone(), every_event()).run(&mut both);
    assert_eq!(both.second.events, all[..10]);
    let only: Vec<_> = all.iter().filter(|e| e.1 == "sched_switch").collect();
    let got: Vec<_> = both
        .first
        .events
        .iter()
        .filter(|e| e.1 == "sched_switch")
        .collect();
    assert_eq!(got, only);

    // Two narrow sinks: the read gives the union of their classes.
    let irqs = Recorder {
        names: Some(vec!["irq_handler_entry"]),
        ..Default::default()
    };
    let mut fan = Fanout::new(vec![Box::new(switches()), Box::new(irqs)]);
    let mut count = Both::new(Recorder::default(), &mut fan);
    FileSource::new(traces, every_event()).run(&mut count);
    // The recorder that wants every event makes the read give every event to both.
    assert_eq!(count.first.events, all);
    let alone = Recorder {
        names: Some(vec!["sched_switch"]),
        ..Default::default()
    };
    let union = all
        .iter()
        .filter(|e| e.1 == "sched_switch" || e.1 == "irq_handler_entry")
        .count();
    let mut fan = Fanout::new(vec![
        Box::new(alone),
        Box::new(Recorder {
            names: Some(vec!["irq_handler_entry"]),
            ..Default::default()
        }),
    ]);
    let mut seen = 0usize;
    let mut counter = Both::new(&mut fan, Counter(&mut seen));
    FileSource::new(
        ctf::open_all(&[tmp.path().join("km")]).unwrap(),
        every_event(),
    )
    .run(&mut counter);
    // The union of the two sinks' classes (plus at most the first event of each class left
    // out), far fewer than every event.
    assert!(seen >= union && seen < all.len() / 2, "{seen} {union}");
    assert_eq!(fan.into_inner().len(), 2);
}

#[test]
fn notices_of_losses_come_in_order_and_a_lossless_read_stops_at_the_first() {
    // An arbitrary trace that discarded events somewhere.
    let tmp = tempfile::tempdir().unwrap();
    let mut found = None;
    for seed in 0..40 {
        let dir = tmp.path().join(format!("chaos-{seed}"));
        let t = write_chaos_trace(&dir, &mut Rng::new(seed), &ChaosOptions::events(3000)).unwrap();
        if t.discarded > 0 {
            found = Some(dir);
            break;
        }
    }
    let dir = found.expect("a chaos trace with discarded events");
    let traces = ctf::open_all(&[&dir]).unwrap();
    let (all, losses) = merged(&traces);
    assert!(losses > 0);
    let mut rec = Recorder {
        notices: true,
        ..Default::default()
    };
    FileSource::new(traces.clone(), every_event()).run(&mut rec);
    assert_eq!(rec.events, all);
    assert_eq!(rec.seen_notices.len(), losses);
    assert!(rec.seen_notices.iter().all(|n| n.count > 0
        && n.trace == 0
        && matches!(
            n.kind,
            NoticeKind::DiscardedEvents | NoticeKind::DiscardedPackets
        )));

    let mut lossless = Recorder::default();
    let summary = FileSource::new(traces, every_event())
        .lossless()
        .run(&mut lossless);
    assert!(summary.lost);
    assert!(lossless.events.len() < all.len());
    assert_eq!(lossless.events, all[..lossless.events.len()]);
}

#[test]
fn a_damaged_stream_gives_a_typed_diagnostic_and_the_rest_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = kernel_mix(tmp.path());
    let (all, _) = merged(&traces);
    drop(traces);
    // A bad magic number at the start of one stream file: its first packet cannot be read;
    // the index lets the reader go on at the next.
    let file = tmp.path().join("km/chan_1");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[..4].copy_from_slice(&[0xee; 4]);
    std::fs::write(&file, bytes).unwrap();
    let traces = ctf::open_all(&[tmp.path()]).unwrap();
    let mut rec = Recorder::default();
    let summary = FileSource::new(traces, every_event()).run(&mut rec);
    assert!(!rec.events.is_empty());
    assert!(rec.events.len() < all.len());
    // (Stream positions can change: the damaged stream's first packet names no stream id.)
    let key = |e: &(i64, String, usize, usize)| (e.0, e.1.clone());
    let all: Vec<_> = all.iter().map(key).collect();
    let got: Vec<_> = rec.events.iter().map(key).collect();
    assert!(is_subsequence(&got, &all));
    let d = summary
        .errors
        .iter()
        .find(|d| d.kind == pipeline::DiagnosticKind::Decode)
        .unwrap_or_else(|| panic!("a decode error: {:?}", summary.errors));
    assert!(
        d.file.as_ref().is_some_and(|f| f.ends_with("chan_1")),
        "{d:?}"
    );
    assert!(d.offset.is_some());
    assert!(d.to_string().contains("chan_1"));
}
