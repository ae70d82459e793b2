//! The trace writer's LTTng packet indexes (`index/NAME.idx`): one entry per packet, each
//! equal to what that packet's header and context hold (decoded here with the trace's own
//! metadata, not the writer's offsets), published with the trace and valid after a flush.

use ctf::index::{self, PacketEntry};
use ctf::ir::ByteOrder;
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use ctf::Trace;
use scenario::kernel_mix::{generate, KernelMixParams};
use scenario::lttng::{ev, trace_class, HostInfo, NetLayout};
use std::path::{Path, PathBuf};

/// The packets of a stream file as their headers and contexts describe them.
fn packets_of(trace: &Trace, path: &Path) -> Vec<PacketEntry> {
    let data = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < data.len() {
        let e = index::entry_at(&trace.layout, path, &data, off as u64).unwrap();
        off += (e.packet_bits / 8) as usize;
        assert!(off <= data.len(), "{}: packet past the end", path.display());
        out.push(e);
    }
    out
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Checks the index of every stream file of `dir` against the file; returns, per stream
/// file (by name), its index entries.
fn check_indexes(dir: &Path) -> Vec<(String, Vec<PacketEntry>)> {
    let trace = Trace::open(dir).unwrap();
    let streams: Vec<String> = names_in(dir)
        .into_iter()
        .filter(|n| n != "metadata")
        .collect();
    assert!(!streams.is_empty());
    // One index per stream file, and nothing else in `index/`.
    let want: Vec<String> = streams.iter().map(|n| format!("{n}.idx")).collect();
    assert_eq!(names_in(&dir.join("index")), want);
    let mut out = Vec::new();
    for name in streams {
        let path = dir.join(&name);
        let ipath = dir.join("index").join(format!("{name}.idx"));
        assert_eq!(index::path_of(&path), ipath);
        let bytes = std::fs::read(&ipath).unwrap();
        assert_eq!(bytes[..16], index::header(), "{name}: a version 1.1 header");
        let entries = index::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bytes.len(), 16 + entries.len() * index::ENTRY_1_1, "{name}");
        let len = std::fs::metadata(&path).unwrap().len();
        index::check(&entries, len).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(entries, packets_of(&trace, &path), "{name}");
        // The instance id is the CPU number, the sequence numbers count from 0.
        let cpu: u64 = name.rsplit('_').next().unwrap().parse().unwrap();
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(e.stream_class_id, 0, "{name}");
            assert_eq!(e.instance_id, Some(cpu), "{name}");
            assert_eq!(e.seq_num, Some(i as u64), "{name}");
        }
        out.push((name, entries));
    }
    out
}

/// Whether babeltrace2, which uses index files when present, still reads `dir` and finds
/// `events` events. `quiet`: nothing on stderr either.
fn babeltrace_reads(dir: &Path, events: u64, quiet: bool) {
    let o = match std::process::Command::new("babeltrace2").arg(dir).output() {
        Ok(o) => o,
        Err(_) => {
            eprintln!("babeltrace2 not installed: its reading of the indexed trace is skipped");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "babeltrace2 failed: {stderr}");
    assert!(!quiet || stderr.is_empty(), "babeltrace2 warned: {stderr}");
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with('['))
        .count();
    assert_eq!(lines as u64, events, "babeltrace2's events ({stderr})");
}

#[test]
fn index_path_is_lttngs() {
    assert_eq!(
        index::path_of(Path::new("/t/kernel/chan_3")),
        PathBuf::from("/t/kernel/index/chan_3.idx")
    );
    assert_eq!(
        index::path_of(Path::new("chan_0")),
        PathBuf::from("index/chan_0.idx")
    );
}

#[test]
fn every_packet_of_a_generated_trace_is_indexed() {
    for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("km");
        let stats = generate(
            &dir,
            &KernelMixParams {
                events: 4000,
                cpus: 3,
                header,
                packet_size: 4096,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!tmp.path().join(".km.partial").exists());
        let streams = check_indexes(&dir);
        assert_eq!(streams.len(), 3);
        for (name, entries) in &streams {
            assert!(entries.len() > 5, "{name}: {} packets", entries.len());
        }
        let packets: usize = streams.iter().map(|(_, e)| e.len()).sum();
        assert_eq!(packets as u64, stats.packets);
        babeltrace_reads(&dir, stats.events, true);
    }
}

fn host() -> HostInfo {
    HostInfo {
        hostname: "indexhost".into(),
        trace_uuid: [3; 16],
        clock_uuid: [4; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "index".into(),
        kernel_release: "6.1.0".into(),
    }
}

#[test]
fn discarded_counts_and_flushed_packets_are_indexed() {
    const PACKET: u64 = 16384;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let partial = tmp.path().join(".kernel.partial");
    let tc = trace_class(&host(), NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let opts = WriterOptions {
        packet_size: PACKET as usize,
        ..Default::default()
    };
    // CPU 2 gets no events: its one packet is written by `finish`.
    let mut w = TraceWriter::create(&dir, &tc, 3, &opts).unwrap();
    w.set_session_start(1000);
    let mut lost = [0u64; 2];
    let n = 12_000u64;
    for i in 0..n {
        let cpu = (i % 2) as u32;
        if i % 400 < 2 {
            let k = 1 + i / 100 + cpu as u64;
            w.add_discarded(cpu, k).unwrap();
            lost[cpu as usize] += k;
        }
        // Flushes a few events apart: the second one's packets are short (4 KiB).
        if i == 5000 || i == 5010 {
            w.flush().unwrap();
            // The index in the partial directory matches what is on disk so far.
            let early = check_indexes(&partial);
            assert!(early[2].1.is_empty(), "CPU 2 has no packet yet");
        }
        let payload = [Value::I64(i as i64), Value::I64(1)];
        w.write_event(cpu, ev::IRQ_EXIT, 2000 + i * 10, &payload)
            .unwrap();
    }
    let stats = w.finish().unwrap();
    assert!(!partial.exists());
    let streams = check_indexes(&dir);
    let packets: usize = streams.iter().map(|(_, e)| e.len()).sum();
    assert_eq!(packets as u64, stats.packets);
    for (cpu, (name, entries)) in streams.iter().enumerate() {
        let counts: Vec<u64> = entries.iter().map(|e| e.discarded).collect();
        assert!(counts.is_sorted(), "{name}: {counts:?}");
        if cpu < 2 {
            assert!(counts[0] > 0 && counts[0] < lost[cpu], "{name}: {counts:?}");
            assert_eq!(counts.last(), Some(&lost[cpu]), "{name}");
            assert!(entries.iter().any(|e| e.packet_bits == 4096 * 8), "{name}");
            assert!(
                entries.iter().any(|e| e.packet_bits == PACKET * 8),
                "{name}"
            );
        } else {
            assert_eq!(counts, [0], "{name}");
            assert_eq!(
                entries[0].ts_begin, 1000,
                "{name}: begins at the session start"
            );
        }
    }
    // Discarded events make babeltrace2 warn on stderr.
    babeltrace_reads(&dir, n, false);
}

#[test]
fn big_endian_traces_have_big_endian_indexes_too() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("be");
    let events = testkit::write_small_trace(&dir, ByteOrder::Big, 7);
    let streams = check_indexes(&dir);
    assert!(streams.iter().all(|(_, e)| e.len() == 1));
    babeltrace_reads(&dir, events, true);
}

#[test]
fn long_streams_write_their_index_as_they_go() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("long");
    let tc = trace_class(&host(), NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let opts = WriterOptions {
        packet_size: 4096,
        ..Default::default()
    };
    let mut w = TraceWriter::create(&dir, &tc, 1, &opts).unwrap();
    let n = 300_000u64;
    for i in 0..n {
        let payload = [Value::I64(i as i64), Value::I64(1)];
        w.write_event(0, ev::IRQ_EXIT, 1000 + i * 3, &payload)
            .unwrap();
    }
    // Before any flush, some entries are on disk already, and only of packets that are.
    let partial = tmp.path().join(".long.partial");
    let bytes = std::fs::read(partial.join("index/chan_0.idx")).unwrap();
    let early = index::parse(&bytes).unwrap();
    let on_disk = std::fs::metadata(partial.join("chan_0")).unwrap().len();
    index::check(&early, on_disk).unwrap();
    assert!(early.len() >= 256, "{} entries", early.len());
    let stats = w.finish().unwrap();
    let streams = check_indexes(&dir);
    let entries = &streams[0].1;
    assert!(entries.len() > early.len(), "{} packets", entries.len());
    assert_eq!(entries.len() as u64, stats.packets);
    assert_eq!(entries[..early.len()], early[..]);
    babeltrace_reads(&dir, n, true);
}
