//! Fuzzer bytes as the data stream of a fixed LTTng-kernel-like trace (the metadata of the
//! broken-input tests: compact/extended headers, strings, arrays, sequences, a variant and
//! enums), decoded in memory to the end with every field touched.
#![no_main]

use std::sync::{Arc, OnceLock};

use ctf::{Message, ScanCounts, ScanSink, SkipRule, StreamReader, Trace};
use libfuzzer_sys::fuzz_target;

const METADATA: &str = include_str!("../../tests/common/kernel.tsdl");

fn trace() -> Arc<Trace> {
    static TRACE: OnceLock<Arc<Trace>> = OnceLock::new();
    TRACE
        .get_or_init(|| {
            Arc::new(Trace::from_metadata_bytes(METADATA.as_bytes(), "fuzz_stream").unwrap())
        })
        .clone()
}

/// Events `scan` hands over, and the messages and errors it returns, as text.
struct Collect(Vec<String>);

impl ScanSink for Collect {
    fn event(&mut self, class: (usize, usize), cycles: u64, fold: u64) {
        self.0.push(format!("{class:?} {cycles} {fold}"));
    }
}

/// A sink that lends its counters, as `tracekit count` does: per class counts, the
/// wrapping sum of folds, the largest clock value.
#[derive(Default)]
struct Counting {
    row: Vec<u64>,
    checksum: u64,
    max_cycles: u64,
}

impl ScanSink for Counting {
    fn event(&mut self, (_, ev): (usize, usize), cycles: u64, fold: u64) {
        if self.row.len() <= ev {
            self.row.resize(ev + 1, 0);
        }
        self.row[ev] += 1;
        self.checksum = self.checksum.wrapping_add(fold);
        self.max_cycles = self.max_cycles.max(cycles);
    }

    fn counts(&mut self, _sc: usize, classes: usize) -> Option<ScanCounts<'_>> {
        if self.row.len() < classes {
            self.row.resize(classes, 0);
        }
        Some(ScanCounts {
            counts: &mut self.row,
            checksum: &mut self.checksum,
            max_cycles: &mut self.max_cycles,
        })
    }
}

fuzz_target!(|data: &[u8]| {
    // `scan` must yield what `next` and `fold_fields` do.
    let mut by_next = Vec::new();
    let mut r = StreamReader::from_bytes(trace(), 0, data.to_vec());
    while let Some(m) = r.next() {
        by_next.push(match m {
            Ok(Message::Event) => {
                let ev = r.event();
                format!(
                    "{:?} {} {}",
                    ev.class_index(),
                    ev.cycles(),
                    ev.fold_fields()
                )
            }
            other => format!("{other:?}"),
        });
    }
    let mut s = StreamReader::from_bytes(trace(), 0, data.to_vec());
    let mut by_scan = Collect(Vec::new());
    while let Some(m) = s.scan(&mut by_scan) {
        by_scan.0.push(format!("{m:?}"));
    }
    assert_eq!(by_next, by_scan.0);
    assert_eq!(r.warnings, s.warnings);

    // A counting scan must count what `next` reads (one stream class here).
    let mut expected = Counting::default();
    let mut r = StreamReader::from_bytes(trace(), 0, data.to_vec());
    while let Some(m) = r.next() {
        if let Ok(Message::Event) = m {
            let ev = r.event();
            expected.event(ev.class_index(), ev.cycles(), ev.fold_fields());
        }
    }
    let mut counting = Counting::default();
    let mut c = StreamReader::from_bytes(trace(), 0, data.to_vec());
    while c.scan(&mut counting).is_some() {}
    let n = expected.row.len().max(counting.row.len());
    expected.row.resize(n, 0);
    counting.row.resize(n, 0);
    assert_eq!(expected.row, counting.row);
    assert_eq!(expected.checksum, counting.checksum);
    assert_eq!(expected.max_cycles, counting.max_cycles);
    assert_eq!(r.warnings, c.warnings);

    // A skipping reader (as the analyses' merger sets up) must give out a part of what a
    // full read gives, every event of a wanted class among it, with the same other messages
    // and warnings: wanted classes and the time window taken from the first bytes.
    let mut full = Vec::new();
    let mut r = StreamReader::from_bytes(trace(), 0, data.to_vec());
    while let Some(m) = r.next() {
        full.push(match m {
            Ok(Message::Event) => {
                let ev = r.event();
                Ok((
                    r.events_read,
                    ev.class_index(),
                    ev.cycles(),
                    ev.fold_fields(),
                ))
            }
            other => Err(format!("{other:?}")),
        });
    }
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let classes = trace().layout.streams.at(0).events.len();
    let wanted: Vec<bool> = (0..classes)
        .map(|c| byte(c % 4) >> (c / 4 % 8) & 1 == 1)
        .collect();
    let (lo, hi) = match byte(4) % 3 {
        0 => (i64::MIN, i64::MAX),
        1 => (i64::from(byte(5)) * 1000, i64::MAX),
        _ => (i64::MIN, i64::from(byte(5)) * 1000),
    };
    let rule = SkipRule {
        wanted: Arc::new(vec![wanted.clone()]),
        lo,
        hi,
    };
    let mut k = StreamReader::from_bytes(trace(), 0, data.to_vec());
    k.set_skip(Some(&rule));
    let mut kept = Vec::new();
    while let Some(m) = k.next() {
        kept.push(match m {
            Ok(Message::Event) => {
                let ev = k.event();
                Ok((
                    k.events_read,
                    ev.class_index(),
                    ev.cycles(),
                    ev.fold_fields(),
                ))
            }
            other => Err(format!("{other:?}")),
        });
    }
    let mut rest = kept.iter().peekable();
    for item in &full {
        match (item, rest.peek()) {
            (a, Some(b)) if a == *b => {
                rest.next();
            }
            (Ok((_, (_, ev), _, _)), _) => {
                assert!(
                    !wanted.get(*ev).copied().unwrap_or(true),
                    "a wanted event left out"
                );
            }
            (Err(m), _) => panic!("message {m} left out"),
        }
    }
    assert!(
        rest.next().is_none(),
        "given out what a full read does not give"
    );
    assert_eq!(r.warnings, k.warnings);
    assert_eq!(r.events_read, k.events_read);

    let mut r = StreamReader::from_bytes(trace(), 0, data.to_vec());
    // Each `next` consumes at least one packet or event of at least one byte, or ends the
    // stream: more items than bits would mean a loop.
    let limit = data.len() as u64 * 8 + 16;
    let mut n = 0u64;
    while let Some(m) = r.next() {
        n += 1;
        assert!(n <= limit, "reader does not end");
        if let Ok(Message::Event) = m {
            let ev = r.event();
            let _ = (
                ev.name(),
                ev.class_id(),
                ev.cycles(),
                ev.time_ns(),
                ev.location(),
            );
            for v in [
                ev.packet_header(),
                ev.packet_context(),
                ev.header(),
                ev.common_context(),
                ev.specific_context(),
                ev.payload(),
            ]
            .into_iter()
            .flatten()
            {
                let _ = v.to_value();
            }
            let _ = ev.fold_fields();
            if let Some(p) = ev.payload() {
                // The straight-line accessors must agree with the general ones.
                for i in 0..64 {
                    let Some(m) = p.member_at(i) else { break };
                    assert_eq!(p.int_member(i), m.as_i128());
                }
                if let Some((data, base, plan)) = p.fixed_struct() {
                    for r in plan.reads.iter() {
                        let _ = (r.int(data, base), r.fold(data, base));
                    }
                }
                for name in ["prev_comm", "filename", "data", "v", "names"] {
                    if let Some(f) = p.field(name) {
                        let _ = (f.as_str(), f.as_i128(), f.int_mask(), f.role());
                    }
                }
            }
        }
    }
});
