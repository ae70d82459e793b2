//! What a reader does with the LTTng packet indexes beside stream files: it passes over the
//! packets that end before a time it is asked to start from (`seek_ns`) and gives from there
//! exactly what a full read gives from there; it goes on past a packet it cannot open at the
//! next packet the index lists; it reads without an index that does not hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctf::index;
use ctf::trace::FileIndex;
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use ctf::{Merger, Message, SkipRule, StreamReader, Trace};
use scenario::kernel_mix::{generate, KernelMixParams};
use scenario::lttng::{ev, trace_class, HostInfo, NetLayout};

/// A generated kernel trace in small packets (so that streams have many), with its indexes.
fn kernel_trace(dir: &Path) -> PathBuf {
    let p = KernelMixParams {
        events: 20_000,
        cpus: 3,
        seed: 5,
        packet_size: 4096,
        ..Default::default()
    };
    let out = dir.join("mix");
    generate(&out, &p).unwrap();
    assert!(out.join("index").is_dir(), "the writer writes indexes");
    out
}

/// What a consumer that drops everything before `ns` sees of a merge: each event at or after
/// `ns` as (reader, class, time, fold of its fields), and each loss report that ends there.
fn seen_from(m: &mut Merger, ns: i64) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(msg) = m.next() {
        let msg = msg.clone();
        let Some(t) = m.current_time() else { continue };
        let end = match msg {
            Message::DiscardedEvents { end_ns, .. } | Message::DiscardedPackets { end_ns, .. } => {
                end_ns.unwrap_or(t)
            }
            Message::Event => t,
        };
        if end < ns {
            continue;
        }
        match msg {
            Message::Event => {
                let ev = m.event().unwrap();
                let reader = m.current_order().unwrap().1;
                out.push(format!(
                    "{reader} {:?} {t} {}",
                    ev.class_index(),
                    ev.fold_fields()
                ));
            }
            other => out.push(format!("{other:?}")),
        }
    }
    out
}

fn span(traces: &[Arc<Trace>]) -> (i64, i64) {
    let mut m = Merger::new(traces);
    let (mut a, mut b) = (i64::MAX, i64::MIN);
    while let Some(msg) = m.next() {
        if *msg == Message::Event {
            let t = m.current_time().unwrap();
            a = a.min(t);
            b = b.max(t);
        }
    }
    (a, b)
}

#[test]
fn seeking_gives_what_a_full_read_gives_from_there() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = kernel_trace(tmp.path());
    let traces = ctf::open_all(&[&dir]).unwrap();
    let (a, b) = span(&traces);
    let mut passed_late = 0;
    for pct in [0i64, 1, 10, 37, 50, 83, 99, 100, 101] {
        let ns = a + (b - a) * pct / 100;
        let full = seen_from(&mut Merger::new(&traces), ns);
        let mut m = Merger::new(&traces);
        let passed = m.seek_ns(ns);
        let seeked = seen_from(&mut m, ns);
        assert_eq!(full.len(), seeked.len(), "from {pct} %");
        assert!(full == seeked, "from {pct} %: not the same messages");
        if pct >= 50 {
            passed_late += passed;
        }
        if pct == 0 {
            assert_eq!(passed, 0);
        }
    }
    // The streams have ~60 packets each: later starts pass over most of them.
    assert!(passed_late > 200, "{passed_late} packets passed over");
}

/// The same with readers that leave out unwanted classes, as the analyses read.
#[test]
fn seeking_skipping_readers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = kernel_trace(tmp.path());
    let traces = ctf::open_all(&[&dir]).unwrap();
    let (a, b) = span(&traces);
    let classes = traces[0].layout.streams.at(0).events.len();
    let wanted: Vec<bool> = (0..classes).map(|c| c % 3 == 0).collect();
    for pct in [5i64, 40, 77] {
        let lo = a + (b - a) * pct / 100;
        let rule = |_: &Trace| SkipRule {
            wanted: Arc::new(vec![wanted.clone()]),
            lo,
            hi: i64::MAX,
        };
        let full = seen_from(&mut Merger::new(&traces).with_skip(rule), lo);
        let mut m = Merger::new(&traces).with_skip(rule);
        assert!(m.seek_ns(lo) > 0);
        assert_eq!(full, seen_from(&mut m, lo), "from {pct} %");
    }
}

/// The name of the first stream file of `dir` and its index entries.
fn first_stream(dir: &Path) -> (PathBuf, Vec<index::PacketEntry>) {
    let trace = Trace::open(dir).unwrap();
    let s = &trace.streams[0];
    let entries = s.index(0).expect("an index").to_vec();
    (s.files[0].clone(), entries)
}

/// Events of stream 0 of the trace in `dir` as (byte offset, time), and the errors.
fn read_stream(dir: &Path) -> (Vec<(u64, i64)>, Vec<String>, Vec<String>) {
    let trace = Arc::new(Trace::open(dir).unwrap());
    let mut r = StreamReader::new(trace, 0);
    let (mut events, mut errors) = (Vec::new(), Vec::new());
    while let Some(m) = r.next() {
        match m {
            Ok(Message::Event) => {
                let ev = r.event();
                events.push((ev.location().1, ev.time_ns().unwrap()));
            }
            Ok(_) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    (events, errors, r.warnings)
}

#[test]
fn a_packet_that_cannot_be_opened_is_passed_over_with_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = kernel_trace(tmp.path());
    let (intact, errors, _) = read_stream(&dir);
    assert!(errors.is_empty());
    let (file, entries) = first_stream(&dir);
    assert!(entries.len() > 10);
    let bad = entries[entries.len() / 2];
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[bad.offset as usize..bad.offset as usize + 4].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    std::fs::write(&file, &bytes).unwrap();

    let bad_end = bad.offset + bad.packet_bits / 8;
    let outside: Vec<(u64, i64)> = intact
        .iter()
        .copied()
        .filter(|(at, _)| *at < bad.offset || *at >= bad_end)
        .collect();
    let (events, errors, _) = read_stream(&dir);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert!(e.contains(&format!("at byte {}", bad.offset)), "{e}");
    assert!(e.contains("bad packet magic number"), "{e}");
    assert!(e.contains("next packet the index lists"), "{e}");
    assert_eq!(events, outside, "every other packet's events");

    // Without the index, the stream ends at the packet.
    std::fs::remove_dir_all(dir.join("index")).unwrap();
    let (events, errors, _) = read_stream(&dir);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let before: Vec<(u64, i64)> = intact
        .iter()
        .copied()
        .filter(|(at, _)| *at < bad.offset)
        .collect();
    assert_eq!(events, before);
}

#[test]
fn an_index_that_does_not_hold_is_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = kernel_trace(tmp.path());
    let (intact, _, _) = read_stream(&dir);
    let (file, entries) = first_stream(&dir);
    let idx = dir.join("index").join(format!(
        "{}.idx",
        file.file_name().unwrap().to_string_lossy()
    ));

    // Garbage: rejected; a read that does not need it reads in full and says nothing, one
    // that would use it (to seek) names it in a warning, once, and reads from the start.
    std::fs::write(&idx, b"not an index").unwrap();
    let trace = Trace::open(&dir).unwrap();
    assert!(matches!(
        trace.streams[0].file_index(0),
        FileIndex::Rejected(_)
    ));
    let (events, errors, warnings) = read_stream(&dir);
    assert!(errors.is_empty());
    assert_eq!(events, intact);
    assert!(warnings.is_empty(), "{warnings:?}");
    let traces = ctf::open_all(&[&dir]).unwrap();
    let mut r = StreamReader::new(traces[0].clone(), 0);
    assert_eq!(r.seek_ns(i64::MAX), 0);
    assert_eq!(r.seek_ns(i64::MAX), 0);
    let warnings = r.warnings.clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(&*idx.to_string_lossy()),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("index not used"), "{}", warnings[0]);
    let mut n = 0;
    while let Some(m) = r.next() {
        n += matches!(m, Ok(Message::Event)) as usize;
    }
    assert_eq!(n, intact.len());

    // Packets out of order: rejected.
    let mut swapped = entries.clone();
    swapped.swap(1, 2);
    let mut bytes = index::header().to_vec();
    for e in &swapped {
        bytes.extend_from_slice(&index::encode(e));
    }
    std::fs::write(&idx, &bytes).unwrap();
    let trace = Trace::open(&dir).unwrap();
    assert!(matches!(
        trace.streams[0].file_index(0),
        FileIndex::Rejected(_)
    ));

    // A stream file cut inside a packet: the index keeps the packets still whole.
    let mut bytes = index::header().to_vec();
    for e in &entries {
        bytes.extend_from_slice(&index::encode(e));
    }
    std::fs::write(&idx, &bytes).unwrap();
    let last = entries[entries.len() - 1];
    let data = std::fs::read(&file).unwrap();
    std::fs::write(&file, &data[..last.offset as usize + 100]).unwrap();
    let trace = Trace::open(&dir).unwrap();
    assert_eq!(
        trace.streams[0].index(0).map(|e| e.len()),
        Some(entries.len() - 1)
    );
}

/// A trace whose streams report discarded events in most packets and, on CPU 0, a lost
/// packet (cut out of the file and its index, as a relay daemon that dropped it would leave).
fn lossy_trace(dir: &Path) -> PathBuf {
    let host = HostInfo {
        hostname: "lossy".into(),
        trace_uuid: [7; 16],
        clock_uuid: [8; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "lossy".into(),
        kernel_release: "6.1.0".into(),
    };
    let out = dir.join("lossy");
    let tc = trace_class(&host, NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let opts = WriterOptions {
        packet_size: 4096,
        ..Default::default()
    };
    let mut w = TraceWriter::create(&out, &tc, 2, &opts).unwrap();
    for i in 0..8_000u64 {
        let cpu = (i % 2) as u32;
        if i % 150 < 2 {
            w.add_discarded(cpu, 1 + i % 7).unwrap();
        }
        let payload = [Value::I64(i as i64), Value::I64(1)];
        w.write_event(cpu, ev::IRQ_EXIT, 2000 + i * 10, &payload)
            .unwrap();
    }
    w.finish().unwrap();
    let (file, entries) = first_stream(&out);
    let k = entries.len() / 2;
    let cut = entries[k];
    let size = cut.packet_bits / 8;
    let mut data = std::fs::read(&file).unwrap();
    data.drain(cut.offset as usize..(cut.offset + size) as usize);
    std::fs::write(&file, &data).unwrap();
    let mut bytes = index::header().to_vec();
    for (i, e) in entries.iter().enumerate() {
        let mut e = *e;
        match i.cmp(&k) {
            std::cmp::Ordering::Less => {}
            std::cmp::Ordering::Equal => continue,
            std::cmp::Ordering::Greater => e.offset -= size,
        }
        bytes.extend_from_slice(&index::encode(&e));
    }
    let idx = out.join("index").join(format!(
        "{}.idx",
        file.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(idx, bytes).unwrap();
    out
}

#[test]
fn seeking_keeps_loss_reports_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = lossy_trace(tmp.path());
    let traces = ctf::open_all(&[&dir]).unwrap();
    let mut full = Merger::new(&traces);
    let losses = seen_from(&mut full, i64::MIN)
        .into_iter()
        .filter(|m| m.starts_with("Discarded"))
        .count();
    assert!(full.errors.is_empty(), "{:?}", full.errors);
    assert!(losses > 20, "{losses} loss reports");
    // Starts at every packet's beginning of CPU 0 (the lost packet's neighbours among them):
    // the first packet read reports its losses as a full read does.
    let (_, entries) = first_stream(&dir);
    let clock = traces[0].class.clocks[0].clone();
    let mut checked = 0;
    for e in &entries {
        let ns = clock.cycles_to_ns(e.ts_begin) as i64;
        let mut m = Merger::new(&traces);
        let passed = m.seek_ns(ns);
        let seeked = seen_from(&mut m, ns);
        assert_eq!(
            seen_from(&mut Merger::new(&traces), ns),
            seeked,
            "from {ns}"
        );
        checked += passed;
    }
    assert!(checked > 100, "{checked}");
}
