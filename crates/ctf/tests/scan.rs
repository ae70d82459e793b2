//! `StreamReader::scan` must yield what `next` + `Event::fold_fields` yield: the same
//! events (class, cycles, fold of every field), messages, errors and warnings, in the same
//! order, on generated kernel traces (compact and large headers), on packets built byte by
//! byte and then damaged at random, and on every trace of the shared data.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::*;
use ctf::writer::EventHeaderKind;
use ctf::{Message, ScanCounts, ScanSink, StreamReader, Trace};
use proptest::prelude::*;
use scenario::kernel_mix::{generate, KernelMixParams};

/// One thing a reader yielded.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    /// Class index, cycles and fold of every field.
    Event((usize, usize), u64, u64),
    Msg(Message),
    Err(String),
}

/// What reading a stream gave: items, warnings, the reader's event count.
type Read = (Vec<Item>, Vec<String>, u64);

fn by_next(mut r: StreamReader) -> Read {
    let mut out = Vec::new();
    while let Some(m) = r.next() {
        out.push(match m {
            Ok(Message::Event) => {
                let ev = r.event();
                Item::Event(ev.class_index(), ev.cycles(), ev.fold_fields())
            }
            Ok(m) => Item::Msg(m),
            Err(e) => Item::Err(e.to_string()),
        });
        assert!(out.len() < 10_000_000, "reader does not end");
    }
    (out, r.warnings.clone(), r.events_read)
}

/// The items, and the events not yet counted by [`ScanSink::ran`].
struct Collect(Vec<Item>, u64);

impl ScanSink for Collect {
    fn event(&mut self, class: (usize, usize), cycles: u64, fold: u64) {
        self.0.push(Item::Event(class, cycles, fold));
        self.1 += 1;
    }

    fn ran(&mut self, n: u64) {
        assert_eq!(n, self.1, "ran counts the events since the last call");
        self.1 = 0;
    }

    fn pause(&mut self) {
        assert_eq!(self.1, 0, "events before a pause not counted by ran");
    }
}

fn by_scan(mut r: StreamReader) -> Read {
    let mut sink = Collect(Vec::new(), 0);
    while let Some(m) = r.scan(&mut sink) {
        sink.0.push(match m {
            Ok(Message::Event) => panic!("scan yielded an event message"),
            Ok(m) => Item::Msg(m),
            Err(e) => Item::Err(e.to_string()),
        });
        assert!(sink.0.len() < 10_000_000, "reader does not end");
    }
    assert_eq!(sink.1, 0, "events at the end not counted by ran");
    (sink.0, r.warnings.clone(), r.events_read)
}

/// What a counting sink keeps of the events between two other items: events per class,
/// the wrapping sum of their folds, their largest clock value.
#[derive(Debug, Default, Clone, PartialEq)]
struct Tally {
    counts: BTreeMap<(usize, usize), u64>,
    checksum: u64,
    max_cycles: u64,
}

/// A read as a counting sink sees it: per run of events, its tally, then the item that
/// ended it (None for the end of the stream); warnings; the reader's event count.
type Counted = (Vec<(Tally, Option<Item>)>, Vec<String>, u64);

/// The counting view of a read event by event.
fn counted(read: &Read) -> Counted {
    let (mut runs, mut t) = (Vec::new(), Tally::default());
    for item in &read.0 {
        match item {
            Item::Event(class, cycles, fold) => {
                *t.counts.entry(*class).or_default() += 1;
                t.checksum = t.checksum.wrapping_add(*fold);
                t.max_cycles = t.max_cycles.max(*cycles);
            }
            other => runs.push((std::mem::take(&mut t), Some(other.clone()))),
        }
    }
    runs.push((t, None));
    (runs, read.1.clone(), read.2)
}

/// A sink that lends counters for its stream's class ([`ScanSink::counts`]), as
/// `tracekit count` does; events of other classes and those read by `next` come through
/// [`ScanSink::event`].
#[derive(Default)]
struct Counting {
    sc: Option<usize>,
    row: Vec<u64>,
    t: Tally,
}

impl Counting {
    /// The tally since the last call.
    fn take(&mut self) -> Tally {
        let sc = self.sc.unwrap_or(0);
        for (ec, n) in self.row.iter_mut().enumerate() {
            if *n > 0 {
                *self.t.counts.entry((sc, ec)).or_default() += std::mem::take(n);
            }
        }
        std::mem::take(&mut self.t)
    }
}

impl ScanSink for Counting {
    fn event(&mut self, class: (usize, usize), cycles: u64, fold: u64) {
        *self.t.counts.entry(class).or_default() += 1;
        self.t.checksum = self.t.checksum.wrapping_add(fold);
        self.t.max_cycles = self.t.max_cycles.max(cycles);
    }

    fn counts(&mut self, sc: usize, classes: usize) -> Option<ScanCounts<'_>> {
        if *self.sc.get_or_insert(sc) != sc {
            return None;
        }
        if self.row.len() < classes {
            self.row.resize(classes, 0);
        }
        Some(ScanCounts {
            counts: &mut self.row,
            checksum: &mut self.t.checksum,
            max_cycles: &mut self.t.max_cycles,
        })
    }
}

fn by_counting_scan(mut r: StreamReader) -> Counted {
    let (mut sink, mut runs) = (Counting::default(), Vec::new());
    while let Some(m) = r.scan(&mut sink) {
        let item = match m {
            Ok(Message::Event) => panic!("scan yielded an event message"),
            Ok(m) => Item::Msg(m),
            Err(e) => Item::Err(e.to_string()),
        };
        runs.push((sink.take(), Some(item)));
        assert!(runs.len() < 10_000_000, "reader does not end");
    }
    runs.push((sink.take(), None));
    (runs, r.warnings.clone(), r.events_read)
}

/// Reads every stream of `trace` event by event, by a scan and by a counting scan, and
/// compares; returns the events read.
fn compare(trace: &Arc<Trace>) -> usize {
    let mut events = 0;
    for r in trace.readers() {
        let i = r.stream_index();
        let reader = || {
            let mut all = trace.readers();
            all.swap_remove(all.iter().position(|r| r.stream_index() == i).unwrap())
        };
        let (a, b, c) = (by_next(r), by_scan(reader()), by_counting_scan(reader()));
        let what = trace.path.display().to_string();
        assert_same(&a, &b, &what);
        assert_eq!(counted(&a), c, "{what}: counting scan");
        events += a.0.iter().filter(|i| matches!(i, Item::Event(..))).count();
    }
    events
}

fn assert_same(a: &Read, b: &Read, what: &str) {
    if let Some(i) = (0..a.0.len().max(b.0.len())).find(|i| a.0.get(*i) != b.0.get(*i)) {
        panic!(
            "{what}: item {i} differs: next gave {:?}, scan gave {:?}",
            a.0.get(i),
            b.0.get(i)
        );
    }
    assert_eq!(a.1, b.1, "{what}: warnings");
    assert_eq!(a.2, b.2, "{what}: events read");
}

fn generated(header: EventHeaderKind) {
    let dir = tempfile::tempdir().unwrap();
    let params = KernelMixParams {
        events: 20_000,
        cpus: 2,
        header,
        ..Default::default()
    };
    let trace_dir = dir.path().join("kernel");
    generate(&trace_dir, &params).unwrap();
    let trace = Arc::new(Trace::open(&trace_dir).unwrap());
    assert!(trace
        .layout
        .streams
        .iter()
        .all(|(_, sl)| sl.has_scan_table()));
    assert!(compare(&trace) >= 20_000);
}

#[test]
fn compact_headers_scan_as_next() {
    generated(EventHeaderKind::Compact);
}

#[test]
fn large_headers_scan_as_next() {
    generated(EventHeaderKind::Large);
}

#[test]
fn shared_traces_scan_as_next() {
    let Some(shared) = testkit::shared_or_skip("the scan comparison on real traces") else {
        return;
    };
    let (mut traces, mut events) = (0, 0);
    for sub in ["kernel", "ust", "ctf", "ctf2"] {
        let Ok(dirs) = ctf::trace::discover(&shared.join("traces").join(sub)) else {
            continue;
        };
        for d in dirs {
            // Traces the reader rejects are other tests' business.
            let Ok(t) = Trace::open(&d) else { continue };
            events += compare(&Arc::new(t));
            traces += 1;
        }
    }
    assert!(
        traces > 30 && events > 100_000,
        "{traces} traces, {events} events"
    );
}

/// An event of the hand-written metadata, from a few random numbers.
fn event(p: Packet, kind: u8, ts: u64, ext: bool, n: u32) -> Packet {
    let name = ["a", "swapper/0", "", "kworker/u8:1"][n as usize % 4];
    let (id, payload) = match kind % 6 {
        0 => (
            SCHED_SWITCH,
            sched_switch(name, n as i32, 1, "bash", -(n as i32)),
        ),
        1 => (OPENAT, openat(-100, name, n as i32)),
        2 => (SENDMSG, sendmsg(name.as_bytes(), &[n as i32, 4])),
        3 => (TAGGED, tagged_int(n as i32)),
        4 => (TAGGED, tagged_str(name)),
        _ => (BITFIELDS, bitfields(-2, n as u16, 0.5, &[name, "bc"])),
    };
    if ext {
        p.event_ext(id, ts, &payload)
    } else {
        p.event(id, ts & ((1 << 27) - 1), &payload)
    }
}

/// A stream of packets from random events: clock steps (some backwards, some past the
/// compact header's 27 bits), extended headers, sequence gaps and discarded events.
fn stream_of(events: &[(u8, i64, bool, u32)], per_packet: usize) -> Vec<u8> {
    stream_from(events, per_packet, 1000, u64::saturating_add_signed)
}

/// [`stream_of`] with the clock starting at `clock`, moved by `step`.
fn stream_from(
    events: &[(u8, i64, bool, u32)],
    per_packet: usize,
    mut clock: u64,
    step: fn(u64, i64) -> u64,
) -> Vec<u8> {
    let mut packets = Vec::new();
    for (i, chunk) in events.chunks(per_packet.max(1)).enumerate() {
        let begin = clock;
        let mut p = Packet::new(i as u64 * (1 + (i as u64 % 3 == 2) as u64), begin, begin);
        p.discarded = i as u64 / 2;
        for &(kind, by, ext, n) in chunk {
            clock = step(clock, by);
            p = event(p, kind, clock, ext, n);
        }
        p.ts_end = clock;
        packets.push(p);
    }
    stream(&packets)
}

fn in_memory() -> Arc<Trace> {
    Arc::new(Trace::from_metadata_bytes(KERNEL_TSDL.as_bytes(), "chan_0").unwrap())
}

fn compare_bytes(trace: &Arc<Trace>, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let a = by_next(StreamReader::from_bytes(trace.clone(), 0, bytes.clone()));
    let b = by_scan(StreamReader::from_bytes(trace.clone(), 0, bytes.clone()));
    let c = by_counting_scan(StreamReader::from_bytes(trace.clone(), 0, bytes));
    prop_assert_eq!(counted(&a), c);
    prop_assert_eq!(a, b);
    Ok(())
}

#[test]
fn clock_regressions_and_wraps_scan_as_next() {
    let trace = in_memory();
    // Backwards once in the first packet (warned once), again later (not warned), a wrap of
    // the 27-bit compact timestamp, an extended header in the middle.
    let steps: Vec<(u8, i64, bool, u32)> = (0..200)
        .map(|i| {
            let step = match i {
                17 => -50,
                150 => -7,
                90 => 1 << 27,
                _ => 3,
            };
            (i as u8, step, i % 41 == 40, i)
        })
        .collect();
    let bytes = stream_of(&steps, 64);
    let (items, warnings, _) = by_next(StreamReader::from_bytes(trace.clone(), 0, bytes.clone()));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(items.iter().any(|i| matches!(i, Item::Msg(_))));
    compare_bytes(&trace, bytes).unwrap();
}

#[test]
fn clock_near_the_top_of_its_range_scans_as_next() {
    // Compact timestamps that wrap their 27 bits many times from a clock a few wraps below
    // 2^64 (as in a damaged packet, found by fuzzing): the clock wraps past 2^64 as `next`
    // makes it, without an overflow.
    let steps: Vec<(u8, i64, bool, u32)> = (0..300).map(|i| (i as u8, 1 << 25, false, i)).collect();
    for per_packet in [7, 300] {
        let bytes = stream_from(
            &steps,
            per_packet,
            u64::MAX - (5 << 27),
            u64::wrapping_add_signed,
        );
        compare_bytes(&in_memory(), bytes).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Valid streams of random events.
    #[test]
    fn random_streams_scan_as_next(
        events in proptest::collection::vec(
            (any::<u8>(), -100i64..1 << 28, proptest::bool::weighted(0.1), any::<u32>()),
            0..120,
        ),
        per_packet in 1usize..50,
    ) {
        compare_bytes(&in_memory(), stream_of(&events, per_packet))?;
    }

    /// The same streams damaged: bytes overwritten, or cut short.
    #[test]
    fn damaged_streams_scan_as_next(
        events in proptest::collection::vec(
            (any::<u8>(), 0i64..1 << 20, proptest::bool::weighted(0.1), any::<u32>()),
            1..80,
        ),
        per_packet in 1usize..40,
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::weighted(0.3, any::<prop::sample::Index>()),
    ) {
        let mut bytes = stream_of(&events, per_packet);
        for (at, b) in damage {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        compare_bytes(&in_memory(), bytes)?;
    }
}

/// A small generated kernel trace (compact headers, payloads of fixed integers aligned on
/// bytes: the classes whose bodies a counting scan folds class by class) and the bytes of
/// its first stream.
fn generated_stream() -> &'static (Arc<Trace>, Vec<u8>) {
    static TRACE: std::sync::OnceLock<(Arc<Trace>, Vec<u8>)> = std::sync::OnceLock::new();
    TRACE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let params = KernelMixParams {
            events: 3_000,
            cpus: 1,
            ..Default::default()
        };
        let trace_dir = dir.path().join("kernel");
        generate(&trace_dir, &params).unwrap();
        let trace = Arc::new(Trace::open(&trace_dir).unwrap());
        let bytes = std::fs::read(&trace.streams[0].files[0]).unwrap();
        (trace, bytes)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A generated kernel stream damaged: bytes overwritten (ids, timestamps, sizes), or
    /// cut short.
    #[test]
    fn damaged_kernel_streams_scan_as_next(
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::weighted(0.3, any::<prop::sample::Index>()),
    ) {
        let (trace, bytes) = generated_stream();
        let mut bytes = bytes.clone();
        for (at, b) in damage {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        compare_bytes(trace, bytes)?;
    }
}

/// [`KERNEL_TSDL`] as LTTng kernel traces are: most classes with ids above 30 (their events
/// always after an extended header), fixed payloads, and, with `context`, an event context
/// (`lttng add-context -k -t procname -t pid -t tid`).
fn lttng_like_tsdl(context: bool) -> String {
    let mut tsdl = KERNEL_TSDL.to_string();
    if context {
        let at = "\tpacket.context := struct packet_context;\n";
        assert!(tsdl.contains(at));
        tsdl = tsdl.replace(
            at,
            &format!(
                "{at}\tevent.context := struct {{\n\t\tinteger {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _procname[16];\n\t\tint32_t _pid;\n\t\tint32_t _tid;\n\t}};\n"
            ),
        );
    }
    for (id, fields) in LTTNG_LIKE {
        tsdl += &format!(
            "\nevent {{\n\tname = \"ev{id}\";\n\tid = {id};\n\tstream_id = 0;\n\tfields := struct {{\n{fields}\n\t}};\n}};\n"
        );
    }
    tsdl
}

/// Classes [`lttng_like_tsdl`] adds: id and fields (all fixed, whole bytes, on bytes).
const LTTNG_LIKE: [(u32, &str); 4] = [
    (7, "\t\tuint64_t a;\n\t\tuint16_t b;"),
    (31, "\t\tint32_t a;"),
    (
        40,
        "\t\tint32_t a;\n\t\tuint64_t b;\n\t\tinteger { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } c[8];",
    ),
    (1100, "\t\tuint32_t a;\n\t\tint32_t b;"),
];

/// The payload of class `LTTNG_LIKE[k]` from a random number.
fn lttng_like_payload(k: usize, n: u32) -> Vec<u8> {
    let mut p = Vec::new();
    match k {
        0 => {
            p.extend_from_slice(&(u64::from(n) << 20 | 7).to_le_bytes());
            p.extend_from_slice(&(n as u16).to_le_bytes());
        }
        1 => p.extend_from_slice(&(n as i32).to_le_bytes()),
        2 => {
            p.extend_from_slice(&(-(n as i32)).to_le_bytes());
            p.extend_from_slice(&u64::from(n).wrapping_mul(0x9e37_79b9).to_le_bytes());
            p.extend_from_slice(b"kworker\0");
        }
        _ => {
            p.extend_from_slice(&n.to_le_bytes());
            p.extend_from_slice(&(n as i32 ^ -1).to_le_bytes());
        }
    }
    p
}

/// Packets of random events of [`lttng_like_tsdl`]: `(kind, clock step, extended, n)`,
/// kinds below 6 those of [`KERNEL_TSDL`] (strings, sequences, variants), the others
/// [`LTTNG_LIKE`]'s (extended headers for ids above 30 whatever `extended` says), each
/// after an event context when `context`; `per_packet` events a packet.
fn lttng_like_stream(events: &[(u8, i64, bool, u32)], per_packet: usize, context: bool) -> Vec<u8> {
    let mut clock = 1000u64;
    let mut packets = Vec::new();
    for (i, chunk) in events.chunks(per_packet.max(1)).enumerate() {
        let mut p = Packet::new(i as u64, clock, clock);
        p.discarded = i as u64 / 3;
        for &(kind, by, ext, n) in chunk {
            clock = clock.saturating_add_signed(by);
            let mut body = Vec::new();
            if context {
                let mut comm = [0u8; 16];
                comm[..5].copy_from_slice(b"bash\0");
                comm[0] += (n % 7) as u8;
                body.extend_from_slice(&comm);
                body.extend_from_slice(&(n as i32 >> 3).to_le_bytes());
                body.extend_from_slice(&(n as i32).to_le_bytes());
            }
            let kind = kind % 12;
            let id = if kind < 6 {
                // Build the kernel classes' payloads as `event` does, with a header the
                // context then goes after.
                let q = event(Packet::new(0, 0, 0), kind, 0, true, n);
                let id = u32::from_le_bytes(q.body[1..5].try_into().unwrap());
                body.extend_from_slice(&q.body[13..]);
                id
            } else {
                let k = (kind as usize - 6) % LTTNG_LIKE.len();
                body.extend_from_slice(&lttng_like_payload(k, n));
                LTTNG_LIKE[k].0
            };
            p = if ext || id >= 31 {
                p.event_ext(id, clock, &body)
            } else {
                p.event(id, clock & ((1 << 27) - 1), &body)
            };
        }
        p.ts_end = clock;
        packets.push(p);
    }
    stream(&packets)
}

/// The in-memory trace of [`lttng_like_tsdl`].
fn lttng_like_trace(context: bool) -> Arc<Trace> {
    let tsdl = lttng_like_tsdl(context);
    Arc::new(Trace::from_metadata_bytes(tsdl.as_bytes(), "chan_0").unwrap())
}

#[test]
fn extended_headers_and_contexts_scan_as_next() {
    // Long runs of one class (past a batch of 256 bodies) after extended headers, in large
    // and in small packets, with and without an event context, a clock going back once.
    for context in [false, true] {
        let trace = lttng_like_trace(context);
        let events: Vec<(u8, i64, bool, u32)> = (0..3000u32)
            .map(|i| {
                let kind = match i {
                    0..=999 => 8,
                    1000..=1599 => 6 + (i % 6) as u8,
                    _ => (i % 12) as u8,
                };
                let step = if i == 1700 {
                    -40
                } else {
                    1 + (i as i64 % 5) * 3000
                };
                (kind, step, i % 17 == 0, i)
            })
            .collect();
        for per_packet in [3000, 700, 40] {
            compare_bytes(&trace, lttng_like_stream(&events, per_packet, context)).unwrap();
        }
    }
}

#[test]
fn lttng_generator_traces_scan_as_next() {
    // Traces of `bench/gen_lttng_kernel.py`, written without tracekit: LTTng's kernel
    // layouts (most events after an extended header), 4 KiB packets, an event context.
    if !testkit::tool_or_skip(
        "python3",
        "apt-get install python3",
        "the LTTng generator traces",
    ) {
        return;
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/gen_lttng_kernel.py");
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("default", &[][..]),
        ("small", &["--packet-kib", "4", "--contexts"][..]),
    ] {
        let out = dir.path().join(name);
        let status = std::process::Command::new("python3")
            .arg(&script)
            .args(["--events", "20000", "--cpus", "2", "--seed", "3", "-o"])
            .arg(&out)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{name}: the generator failed");
        let trace = Arc::new(Trace::open(&out).unwrap());
        assert!(compare(&trace) >= 20_000, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random streams of LTTng-like events (mostly extended headers), with and without an
    /// event context, in packets of random sizes, valid and damaged.
    #[test]
    fn lttng_like_streams_scan_as_next(
        events in proptest::collection::vec(
            (any::<u8>(), -50i64..1 << 28, proptest::bool::weighted(0.1), any::<u32>()),
            0..400,
        ),
        per_packet in 1usize..300,
        context in any::<bool>(),
        damage in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let mut bytes = lttng_like_stream(&events, per_packet, context);
        for (at, b) in damage {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
        }
        compare_bytes(&lttng_like_trace(context), bytes)?;
    }
}
