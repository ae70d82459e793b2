//! A trace written with a [`PacketTap`] (what `record --url` streams to a relay): the tap gets
//! the metadata, every packet the stream files get, byte for byte, with its index entry, and
//! live beacons for idle streams; a reader fed those packets one at a time
//! ([`ctf::StreamReader::feed`], as the live source does) gives the file's events.

use std::sync::{Arc, Mutex};

use ctf::index::PacketEntry;
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, PacketTap, TraceWriter, WriterOptions};
use scenario::lttng::{ev, trace_class, HostInfo, NetLayout};

#[derive(Default)]
struct Collect {
    metadata: Vec<u8>,
    packets: Vec<(usize, Vec<u8>, PacketEntry)>,
    quiet: Vec<(usize, u64)>,
    finished: Option<Vec<Option<u64>>>,
}

impl PacketTap for Collect {
    fn name(&self) -> &str {
        "memory"
    }
    fn metadata(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.metadata = bytes.to_vec();
        Ok(())
    }
    fn packet(&mut self, s: usize, bytes: &[u8], e: &PacketEntry) -> std::io::Result<()> {
        self.packets.push((s, bytes.to_vec(), *e));
        Ok(())
    }
    fn quiet(&mut self, s: usize, e: &PacketEntry) -> std::io::Result<()> {
        assert_eq!(e.packet_bits, 0);
        self.quiet.push((s, e.ts_end));
        Ok(())
    }
    fn finish(&mut self, last_seq: &[Option<u64>]) -> std::io::Result<()> {
        self.finished = Some(last_seq.to_vec());
        Ok(())
    }
}

fn host() -> HostInfo {
    HostInfo {
        hostname: "taphost".into(),
        trace_uuid: [3; 16],
        clock_uuid: [4; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "tap".into(),
        kernel_release: "6.1.0".into(),
    }
}

fn irq(n: i64) -> Vec<Value> {
    vec![Value::I64(n), Value::I64(1)]
}

#[test]
fn tapped_packets_are_the_files_and_read_fed_one_by_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let tc = trace_class(&host(), NetLayout::NetworkHeader, EventHeaderKind::Compact);
    let mut w = TraceWriter::create(&dir, &tc, 2, &WriterOptions::default()).unwrap();
    let tap = Arc::new(Mutex::new(Collect::default()));
    w.set_tap(tap.clone()).unwrap();
    w.set_session_start(1000);
    // Three live ticks: CPU 1 idle in the second.
    let mut n = 0;
    for (tick, cpus) in [(5000u64, vec![0, 1]), (9000, vec![0]), (13000, vec![0, 1])] {
        for k in 0..20u64 {
            for &cpu in &cpus {
                w.write_event(cpu, ev::IRQ_EXIT, tick - 1000 + k, &irq(n))
                    .unwrap();
                n += 1;
            }
        }
        w.live_tick(tick).unwrap();
    }
    w.write_event(1, ev::IRQ_EXIT, 14000, &irq(n)).unwrap();
    w.finish().unwrap();
    let tap = std::mem::take(&mut *tap.lock().unwrap());
    assert_eq!(tap.metadata, std::fs::read(dir.join("metadata")).unwrap());
    assert_eq!(
        tap.quiet,
        vec![(1, 9000)],
        "CPU 1 said quiet through the idle tick"
    );
    // Each stream's packets, in order, are its file.
    for s in 0..2 {
        let mut bytes = Vec::new();
        let mut seqs = Vec::new();
        for (ps, b, e) in &tap.packets {
            if *ps == s {
                assert_eq!(e.offset, bytes.len() as u64);
                assert_eq!(e.packet_bits, b.len() as u64 * 8);
                bytes.extend_from_slice(b);
                seqs.push(e.seq_num.unwrap());
            }
        }
        assert_eq!(bytes, std::fs::read(dir.join(format!("chan_{s}"))).unwrap());
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
        assert_eq!(tap.finished.as_ref().unwrap()[s], seqs.last().copied());
    }
    // A reader fed the packets one at a time gives the file reader's events.
    let traces = ctf::open_all(&[&dir]).unwrap();
    let trace = &traces[0];
    for s in 0..trace.streams.len() {
        let name = trace.streams[s].files[0].file_name().unwrap().to_owned();
        let si: usize = name.to_string_lossy()["chan_".len()..].parse().unwrap();
        let mut from_file = Vec::new();
        let mut r = ctf::StreamReader::new(trace.clone(), s);
        while let Some(m) = r.next() {
            if m.unwrap() == ctf::Message::Event {
                from_file.push(r.event_time_ns());
            }
        }
        let mut fed = Vec::new();
        let mut r = ctf::StreamReader::from_bytes(trace.clone(), s, Vec::new());
        for (ps, b, _) in &tap.packets {
            if *ps != si {
                continue;
            }
            assert!(
                r.next().is_none(),
                "the reader read everything it was given"
            );
            r.feed(b.clone(), Some(trace.clone()));
            while let Some(m) = r.next() {
                if m.unwrap() == ctf::Message::Event {
                    fed.push(r.event_time_ns());
                }
            }
        }
        assert!(!fed.is_empty());
        assert_eq!(fed, from_file, "stream {si}");
    }
}
