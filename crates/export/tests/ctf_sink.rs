//! The CTF sink through the library API: the events written are the events kept, on the
//! read's time line.

use std::sync::Arc;

use ctf::merge::TimeMap;
use export::ctf::{CtfOptions, CtfSink};
use export::NameFilter;
use pipeline::{FileSource, ReadOptions, Source};

/// Every event of `dir` as (time, name, payload), read with `options`.
fn events(dir: &std::path::Path, options: ReadOptions) -> Vec<(i64, String, String)> {
    let source = FileSource::open(&[dir], options).expect("trace opens");
    let mut out = Vec::new();
    let mut ev = source.events(None);
    while let Some((e, ts)) = ev.next() {
        let payload = e.payload().map(|p| format!("{:?}", p.to_value()));
        out.push((ts, e.name().to_string(), payload.unwrap_or_default()));
    }
    out
}

struct Shift(i64);

impl TimeMap for Shift {
    fn map(&self, _trace: usize, ns: i64) -> i64 {
        ns + self.0
    }
}

#[test]
fn mapped_times_range_and_names() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 20_000, 4, 7);
    let all = events(&input, ReadOptions::default());
    let (first, last) = (all[0].0, all[all.len() - 1].0);
    let shift = 1_500_000_000;
    let (begin, end) = (
        first + shift + (last - first) / 4,
        first + shift + (last - first) / 2,
    );
    let read = ReadOptions {
        begin: Some(begin),
        end: Some(end),
        no_intersection: true,
        time_map: Some(Arc::new(Shift(shift))),
        ..Default::default()
    };
    let source = FileSource::open(&[&input], read).unwrap();
    let out = tmp.path().join("out");
    let options = CtfOptions {
        names: NameFilter::new(&["sched_*", "syscall_exit_*"]),
        ..CtfOptions::new(&out)
    };
    let sink = CtfSink::new(source.traces(), source.options(), options).unwrap();
    let (report, summary) = export::export(&source, sink).unwrap();
    assert!(summary.errors.is_empty());
    let expected: Vec<_> = all
        .into_iter()
        .map(|(t, n, p)| (t + shift, n, p))
        .filter(|(t, n, _)| {
            (begin..=end).contains(t) && (n.starts_with("sched_") || n.starts_with("syscall_exit_"))
        })
        .collect();
    assert!(expected.len() > 100);
    assert_eq!(report.events, expected.len() as u64);
    assert_eq!(report.traces, vec![(out.clone(), expected.len() as u64)]);
    // The output holds the mapped times: read plainly, it gives the kept events at them.
    assert_eq!(events(&out, ReadOptions::default()), expected);
}

#[test]
fn nothing_kept_is_an_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    testkit::kernel_mix(&input, 2_000, 2, 3);
    let source = FileSource::open(&[&input], ReadOptions::default()).unwrap();
    let out = tmp.path().join("out");
    let options = CtfOptions {
        names: NameFilter::new(&["no_such_event"]),
        ..CtfOptions::new(&out)
    };
    let sink = CtfSink::new(source.traces(), source.options(), options).unwrap();
    assert!(matches!(
        export::export(&source, sink),
        Err(export::Error::NothingKept)
    ));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
