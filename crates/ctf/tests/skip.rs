//! A merger whose readers leave out the events of unwanted classes (`Merger::with_skip`)
//! must show a consumer reading the time window `[lo, hi]` (skipping events before `lo`,
//! stopping at the first after `hi`, as the analyses do) what a full merge shows it: the
//! same wanted events in the same order, the same first event time and the same last event
//! time, on streams whose clocks go backwards, on generated kernel traces and on every shared
//! trace.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use ctf::{Merger, Message, SkipRule, Trace};
use proptest::prelude::*;

/// What a window consumer met.
#[derive(Debug, PartialEq)]
struct Seen {
    first: Option<i64>,
    last: Option<i64>,
    /// (reader, events read by it) of each wanted event, in the order met.
    wanted: Vec<(usize, u64)>,
    /// The same for every event met.
    all: Vec<(usize, u64)>,
    errors: Vec<String>,
    /// The readers' warnings (timestamp regressions…) after a window that runs to the end,
    /// where both merges read every event.
    warnings: Vec<String>,
}

/// Per trace, per stream class, per event class: wanted.
type Wanted = Vec<Vec<Vec<bool>>>;

fn consume(traces: &[Arc<Trace>], wanted: &Wanted, lo: i64, hi: i64, skip: bool) -> Seen {
    let mut m = Merger::new(traces);
    if skip {
        m = m.with_skip(|t| SkipRule {
            wanted: Arc::new(wanted[t.index].clone()),
            lo,
            hi,
        });
    }
    let mut seen = Seen {
        first: None,
        last: None,
        wanted: Vec::new(),
        all: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let mut last = None;
    while let Some(msg) = m.next() {
        if *msg != Message::Event {
            continue;
        }
        let Some(ts) = m.current_time() else { continue };
        if ts < lo {
            continue;
        }
        if ts > hi {
            break;
        }
        let ev = m.event().unwrap();
        let (sc, ec) = ev.class_index();
        let is_wanted = wanted[ev.trace().index]
            .get(sc)
            .and_then(|r| r.get(ec))
            .copied()
            .unwrap_or(true);
        let order = m.current_order().unwrap();
        let id = (order.1, order.2);
        if is_wanted {
            seen.wanted.push(id);
        }
        seen.all.push(id);
        seen.first.get_or_insert(ts);
        last = Some((order, ts));
    }
    seen.last = if skip {
        [last, m.last_left_out()]
            .into_iter()
            .flatten()
            .max_by_key(|(o, _)| *o)
            .map(|(_, t)| t)
    } else {
        last.map(|(_, t)| t)
    };
    seen.errors = m.errors.iter().map(|e| e.to_string()).collect();
    if hi == i64::MAX {
        seen.warnings = m
            .readers()
            .iter()
            .flat_map(|r| r.warnings.clone())
            .collect();
    }
    seen
}

/// Checks the skipping merge against the full one; returns the events met by the full one.
fn check(traces: &[Arc<Trace>], wanted: &Wanted, lo: i64, hi: i64) -> usize {
    let full = consume(traces, wanted, lo, hi, false);
    let part = consume(traces, wanted, lo, hi, true);
    assert_eq!(part.first, full.first, "first event time");
    assert_eq!(part.last, full.last, "last event time");
    assert_eq!(part.wanted, full.wanted, "wanted events");
    assert_eq!(part.errors, full.errors);
    assert_eq!(part.warnings, full.warnings);
    // Whatever else it gave out, it gave out in the full merge's order.
    let mut rest = full.all.iter();
    for id in &part.all {
        assert!(rest.any(|f| f == id), "{id:?} out of order");
    }
    full.all.len()
}

/// Wanted tables from a few random bits.
fn wanted_of(traces: &[Arc<Trace>], mut bits: u64) -> Wanted {
    traces
        .iter()
        .map(|t| {
            (0..t.layout.streams.len())
                .map(|sc| {
                    (0..t.layout.streams.at(sc).events.len())
                        .map(|_| {
                            bits = bits.rotate_left(1) ^ 0x9e37_79b9;
                            bits & 3 == 0
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The time span of the events of `traces`.
fn span(traces: &[Arc<Trace>]) -> Option<(i64, i64)> {
    let mut m = Merger::new(traces);
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    while let Some(msg) = m.next() {
        if *msg == Message::Event {
            if let Some(t) = m.current_time() {
                lo = lo.min(t);
                hi = hi.max(t);
            }
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// Windows over `span`: all of it, inner parts, and nothing.
fn windows((lo, hi): (i64, i64)) -> Vec<(i64, i64)> {
    let d = (hi - lo) / 5;
    vec![
        (i64::MIN, i64::MAX),
        (lo + d, hi - d),
        (lo + 2 * d, lo + 2 * d + 1),
        (lo, lo + d),
        (hi - d, i64::MAX),
        (hi + 1, i64::MAX),
    ]
}

/// Writes a trace of the hand-written metadata: per stream, events (kind, clock).
fn write_trace(dir: &Path, streams: &[Vec<(u8, u64)>]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), KERNEL_TSDL).unwrap();
    for (i, events) in streams.iter().enumerate() {
        let mut packets = Vec::new();
        for (n, chunk) in events.chunks(40).enumerate() {
            let begin = chunk.iter().map(|e| e.1).min().unwrap_or(0);
            let end = chunk.iter().map(|e| e.1).max().unwrap_or(0);
            let mut p = Packet::new(n as u64, begin, end);
            p.cpu = i as u32;
            for &(kind, ts) in chunk {
                let (id, payload) = match kind % 4 {
                    0 => (SCHED_SWITCH, sched_switch("a", 1, 0, "bash", 2)),
                    1 => (OPENAT, openat(-100, "/etc/passwd", 0)),
                    2 => (TICK, Vec::new()),
                    _ => (SENDMSG, sendmsg(b"xy", &[3, 4])),
                };
                p = p.event_ext(id, ts, &payload);
            }
            packets.push(p);
        }
        std::fs::write(dir.join(format!("chan_{i}")), stream(&packets)).unwrap();
    }
}

/// Streams whose clocks go backwards here and there.
fn streams_strategy() -> impl Strategy<Value = Vec<Vec<(u8, i64)>>> {
    proptest::collection::vec(
        proptest::collection::vec((0u8..4, -30i64..60), 0..160),
        1..4,
    )
}

fn clocks(steps: &[Vec<(u8, i64)>]) -> Vec<Vec<(u8, u64)>> {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut clock = 1_000 + i as u64 * 7;
            s.iter()
                .map(|&(k, step)| {
                    clock = clock.saturating_add_signed(step).max(1);
                    (k, clock)
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn skipping_merge_shows_what_a_full_merge_shows(
        steps in streams_strategy(),
        bits in any::<u64>(),
        lo_at in 0u32..100,
        len in 0u32..120,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        write_trace(tmp.path(), &clocks(&steps));
        let traces = vec![Arc::new(Trace::open(tmp.path()).unwrap())];
        let wanted = wanted_of(&traces, bits);
        if let Some((a, b)) = span(&traces) {
            let lo = a + (b - a) * lo_at as i64 / 100;
            let hi = lo + (b - a) * len as i64 / 100;
            check(&traces, &wanted, lo, hi);
            for (lo, hi) in windows((a, b)) {
                check(&traces, &wanted, lo, hi);
            }
        }
    }
}

/// Two traces at once: the readers of both merge by the same keys.
#[test]
fn two_traces_with_regressions() {
    let tmp = tempfile::tempdir().unwrap();
    let mk = |seed: i64| -> Vec<Vec<(u8, i64)>> {
        (0..3)
            .map(|s| {
                (0..300)
                    .map(|i| {
                        let x = (i * 7 + s * 13 + seed) % 23;
                        ((x % 4) as u8, if x == 5 { -40 } else { x })
                    })
                    .collect()
            })
            .collect()
    };
    write_trace(&tmp.path().join("a"), &clocks(&mk(1)));
    write_trace(&tmp.path().join("b"), &clocks(&mk(2)));
    // Another trace class: two traces of one UUID would be read as one trace.
    let meta = tmp.path().join("b/metadata");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, text.replace("2a6422d0-", "2a6422d1-")).unwrap();
    let traces = ctf::open_all(&[tmp.path().to_path_buf()]).unwrap();
    assert_eq!(traces.len(), 2);
    let (a, b) = span(&traces).unwrap();
    let mut met = 0;
    for bits in [0, 1, 0xdead_beef, u64::MAX] {
        let wanted = wanted_of(&traces, bits);
        for (lo, hi) in windows((a, b)) {
            met += check(&traces, &wanted, lo, hi);
        }
    }
    assert!(met > 1000, "{met}");
}

/// Clocks going back at events of each kind, wanted or not, read as a whole: the skipping
/// reader warns where the full one does (the fast ways through the skipping reader leave
/// such events to the general path, which warns).
#[test]
fn regressions_at_every_kind_warn_the_same() {
    for kind in 0..4u8 {
        let tmp = tempfile::tempdir().unwrap();
        let steps: Vec<(u8, i64)> = (0..200)
            .map(|i| {
                if i == 57 {
                    (kind, -25)
                } else {
                    ((i % 4) as u8, 10)
                }
            })
            .collect();
        write_trace(tmp.path(), &clocks(&[steps]));
        let traces = vec![Arc::new(Trace::open(tmp.path()).unwrap())];
        let classes = traces[0].layout.streams.at(0).events.len();
        // None, all, the fixed-body `tick` only, all but it.
        for mask in [0u64, !0, 1 << TICK, !(1 << TICK)] {
            let wanted = vec![vec![(0..classes).map(|c| mask >> c & 1 == 1).collect()]];
            let full = consume(&traces, &wanted, i64::MIN, i64::MAX, false);
            assert_eq!(full.warnings.len(), 1, "{:?}", full.warnings);
            check(&traces, &wanted, i64::MIN, i64::MAX);
        }
    }
}

#[test]
fn generated_kernel_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    testkit::kernel_mix(&dir, 30_000, 3, 11);
    let traces = ctf::open_all(&[dir]).unwrap();
    let span = span(&traces).unwrap();
    for bits in [0, 3, 0x1234_5678_9abc] {
        let wanted = wanted_of(&traces, bits);
        for (lo, hi) in windows(span) {
            check(&traces, &wanted, lo, hi);
        }
    }
}

/// A trace of `bench/gen_lttng_kernel.py` (written without tracekit): most events after an
/// extended header, an event context before every payload, 4 KiB packets.
#[test]
fn lttng_generator_trace() {
    if !testkit::tool_or_skip(
        "python3",
        "apt-get install python3",
        "the LTTng generator trace",
    ) {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/gen_lttng_kernel.py");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lk");
    let status = std::process::Command::new("python3")
        .arg(&script)
        .args(["--events", "8000", "--cpus", "2", "--seed", "5"])
        .args(["--packet-kib", "4", "--contexts", "-o"])
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the generator failed");
    let traces = ctf::open_all(&[dir]).unwrap();
    let span = span(&traces).unwrap();
    for bits in [0, 0x1234_5678_9abc] {
        let wanted = wanted_of(&traces, bits);
        for (lo, hi) in windows(span) {
            check(&traces, &wanted, lo, hi);
        }
    }
}

#[test]
fn shared_traces() {
    let Some(shared) = testkit::shared_or_skip("the skipping merge on real traces") else {
        return;
    };
    let mut n = 0;
    for sub in ["kernel", "ust"] {
        let Ok(dirs) = ctf::trace::discover(&shared.join("traces").join(sub)) else {
            continue;
        };
        for d in dirs {
            let Ok(t) = Trace::open(&d) else { continue };
            let traces = vec![Arc::new(t)];
            let Some(span) = span(&traces) else { continue };
            for bits in [0, 0x5555_aaaa_1234] {
                let wanted = wanted_of(&traces, bits);
                for (lo, hi) in windows(span).into_iter().take(3) {
                    n += check(&traces, &wanted, lo, hi);
                }
            }
        }
    }
    assert!(n > 100_000, "{n} events met");
}
