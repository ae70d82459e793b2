//! Broken and unusual inputs: every test builds its trace in a temp dir from the hand-written
//! metadata in `common/kernel.tsdl` and packets built byte by byte, then checks exactly which
//! events, messages, errors (file and byte offset) and warnings a reader yields.

mod common;

use common::*;
use ctf::value::Value;
use ctf::{Error, Message};
use std::path::Path;

fn ev(name: &str, cycles: u64, v: Value) -> Got {
    Got::Event(name.into(), cycles, v)
}

fn tick(cycles: u64) -> Got {
    ev("tick", cycles, Value::Absent)
}

#[test]
fn valid_trace_reads_fully() {
    let dir = tempfile::tempdir().unwrap();
    let p = Packet::new(0, 1000, 2000)
        .event(
            SCHED_SWITCH,
            1100,
            &sched_switch("swapper/0", 0, 0, "bash", 42),
        )
        .event(OPENAT, 1200, &openat(-100, "/etc/passwd", 0o2000000))
        .event(SENDMSG, 1300, &sendmsg(b"hi", &[3, 4]))
        .event(TAGGED, 1400, &tagged_int(-7))
        .event(TAGGED, 1500, &tagged_str("s"))
        .event(BITFIELDS, 1600, &bitfields(-2, 0x1abc, 0.5, &["a", "bc"]))
        .event_ext(TICK, 1 << 40, &[]);
    write_trace(dir.path(), KERNEL_TSDL, &[("chan_0", &p.bytes())]);
    let (got, warnings) = read_dir_stream(dir.path());
    assert_eq!(
        got,
        vec![
            ev(
                "sched_switch",
                1100,
                sched_switch_value("swapper/0", 0, 0, "bash", 42)
            ),
            ev(
                "syscall_entry_openat",
                1200,
                openat_value(-100, "/etc/passwd", 0o2000000)
            ),
            ev(
                "sys_sendmsg",
                1300,
                Value::Struct(vec![
                    Value::U64(2),
                    Value::Array(vec![Value::U64(b'h' as u64), Value::U64(b'i' as u64)]),
                    Value::U64(2),
                    Value::Array(vec![Value::I64(3), Value::I64(4)]),
                ])
            ),
            ev(
                "tagged",
                1400,
                Value::Struct(vec![
                    Value::U64(0),
                    Value::Variant(0, Box::new(Value::I64(-7)))
                ])
            ),
            ev(
                "tagged",
                1500,
                Value::Struct(vec![
                    Value::U64(1),
                    Value::Variant(1, Box::new(Value::str("s")))
                ])
            ),
            ev(
                "bitfields",
                1600,
                Value::Struct(vec![
                    Value::I64(-2),
                    Value::U64(0x1abc),
                    Value::Float(0.5),
                    Value::U64(2),
                    Value::Array(vec![Value::str("a"), Value::str("bc")]),
                ])
            ),
            tick(1 << 40),
        ]
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

fn dec(file: &str, offset: u64) -> Got {
    Got::Decode(file.into(), offset)
}

fn one_stream_trace(bytes: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), KERNEL_TSDL, &[("chan_0", bytes)]);
    dir
}

fn opened(bytes: &[u8]) -> (tempfile::TempDir, Vec<Got>, Vec<String>) {
    let dir = one_stream_trace(bytes);
    let (got, warnings) = read_dir_stream(dir.path());
    (dir, got, warnings)
}

/// The full message of the first error a reader of the trace in `dir` yields.
fn first_error_message(dir: &Path) -> String {
    let traces = ctf::open_all(&[dir]).unwrap();
    let mut r = traces[0].readers().remove(0);
    while let Some(m) = r.next() {
        if let Err(e) = m {
            return e.to_string();
        }
    }
    panic!("no error");
}

/// Three packets: two events each (ticks at 1100+100k in packet k, k = 0..3).
fn three_packets() -> Vec<Packet> {
    (0..3u64)
        .map(|k| {
            let b = 1000 + 1000 * k;
            Packet::new(k, b, b + 900).event(TICK, b + 100, &[]).event(
                OPENAT,
                b + 200,
                &openat(k as i32, "f", 0),
            )
        })
        .collect()
}

fn three_packet_events(k: u64) -> [Got; 2] {
    let b = 1000 + 1000 * k;
    [
        tick(b + 100),
        ev(
            "syscall_entry_openat",
            b + 200,
            openat_value(k as i32, "f", 0),
        ),
    ]
}

#[test]
fn truncated_packet_between_events() {
    let pkts = three_packets();
    let mut bytes = stream(&pkts[..2]);
    let p2 = pkts[0].bytes().len();
    // Cut packet 2 after its first event: its content and padding are missing.
    bytes.truncate(p2 + HEADER_LEN + 4);
    let (dir, got, warnings) = opened(&bytes);
    let mut want = three_packet_events(0).to_vec();
    want.push(three_packet_events(1)[0].clone());
    want.push(dec("chan_0", p2 as u64));
    assert_eq!(got, want);
    assert!(warnings.is_empty());
    let msg = first_error_message(dir.path());
    assert!(
        msg.contains("chan_0") && msg.contains("truncated packet"),
        "{msg}"
    );
}

#[test]
fn truncated_packet_inside_event() {
    let pkts = three_packets();
    let mut bytes = stream(&pkts[..2]);
    let p2 = pkts[0].bytes().len();
    // Cut packet 2 inside the string of its second event.
    let second = p2 + HEADER_LEN + 4;
    bytes.truncate(second + 4 + 4 + 1);
    let (dir, got, _) = opened(&bytes);
    let mut want = three_packet_events(0).to_vec();
    want.push(three_packet_events(1)[0].clone());
    want.push(dec("chan_0", p2 as u64));
    assert_eq!(got, want);
    let msg = first_error_message(dir.path());
    assert!(
        msg.contains("truncated packet") && msg.contains(&format!("event at byte {}", second + 8)),
        "{msg}"
    );
}

#[test]
fn file_ends_inside_packet_header() {
    let pkts = three_packets();
    let mut bytes = stream(&pkts[..2]);
    let p2 = pkts[0].bytes().len();
    bytes.truncate(p2 + 40);
    let (_dir, got, _) = opened(&bytes);
    let mut want = three_packet_events(0).to_vec();
    // The first field that does not fit: timestamp_end, at byte 40 of the packet.
    want.push(dec("chan_0", p2 as u64 + 40));
    assert_eq!(got, want);
}

#[test]
fn corrupt_event_in_second_packet() {
    let mut pkts = three_packets();
    let p2 = pkts[0].bytes().len();
    let bad_at = pkts[1].next_event_offset();
    // A variant tag with no option (7), then an event that is skipped with the packet's rest.
    let mut bad = tagged_int(5);
    bad[0] = 7;
    pkts[1] = pkts[1]
        .clone()
        .event(TAGGED, 1300 + 1000, &bad)
        .event(TICK, 2400, &[]);
    let (dir, got, _) = opened(&stream(&pkts));
    let mut want = three_packet_events(0).to_vec();
    want.extend(three_packet_events(1));
    // The variant is after the 4-byte header and the 1-byte tag.
    want.push(dec("chan_0", (p2 + bad_at + 5) as u64));
    want.extend(three_packet_events(2));
    assert_eq!(got, want);
    let msg = first_error_message(dir.path());
    assert!(msg.contains("no variant option for tag value 7"), "{msg}");
}

/// Packet 2 of three is rejected as a whole: the stream ends there.
fn second_packet_rejected(edit: impl FnOnce(&mut Packet), what: &str) {
    let mut pkts = three_packets();
    edit(&mut pkts[1]);
    let p2 = pkts[0].bytes().len();
    let (dir, got, _) = opened(&stream(&pkts));
    let mut want = three_packet_events(0).to_vec();
    want.push(dec("chan_0", p2 as u64));
    assert_eq!(got, want);
    let msg = first_error_message(dir.path());
    assert!(msg.contains(what), "{msg}");
}

#[test]
fn bad_packet_magic() {
    second_packet_rejected(
        |p| p.magic = 0xdead_beef,
        "bad packet magic number 0xdeadbeef",
    );
}

/// The CTF magic byte-swapped is data of the other byte order (a stream file of another
/// trace): the error says so.
#[test]
fn byte_swapped_packet_magic_names_the_byte_order() {
    second_packet_rejected(
        |p| p.magic = MAGIC.swap_bytes(),
        "bad packet magic number 0xc11ffcc1 (the CTF magic byte-swapped: the stream's byte order \
         differs from the metadata's",
    );
}

#[test]
fn packet_uuid_mismatch_warns_and_keeps_events() {
    let mut pkts = three_packets();
    pkts[1].uuid[15] ^= 1;
    let p2_at = pkts[0].bytes().len();
    let (dir, got, warnings) = opened(&stream(&pkts));
    let mut want = three_packet_events(0).to_vec();
    want.extend(three_packet_events(1));
    want.extend(three_packet_events(2));
    assert_eq!(got, want);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let file = dir.path().join("chan_0");
    assert!(
        warnings[0].starts_with(&format!(
            "{}: at byte {p2_at}: packet UUID differs",
            file.display()
        )),
        "{warnings:?}"
    );
}

/// Times past what 64-bit nanoseconds hold (2262 from 1970) are clamped, with one warning
/// naming the packet, and every event is still read with its own clock value.
#[test]
fn clock_values_past_64_bit_nanoseconds_are_clamped_with_a_warning() {
    let far = 1u64 << 63;
    let pkts = [
        Packet::new(0, 1000, 2000).event(TICK, 1100, &[]),
        Packet::new(1, far, far + 300)
            .event_ext(TICK, far + 100, &[])
            .event_ext(TICK, far + 200, &[]),
        Packet::new(2, far + 400, far + 900).event_ext(TICK, far + 500, &[]),
    ];
    let p2_at = pkts[0].bytes().len();
    let dir = one_stream_trace(&stream(&pkts));
    let traces = ctf::open_all(&[dir.path()]).unwrap();
    let mut r = traces[0].readers().remove(0);
    let mut times = Vec::new();
    while let Some(m) = r.next() {
        if let Ok(Message::Event) = m {
            times.push((r.event().cycles(), r.event_time_ns()));
        }
    }
    assert_eq!(
        times,
        [
            (1100, Some(1100)),
            (far + 100, Some(i64::MAX)),
            (far + 200, Some(i64::MAX)),
            (far + 500, Some(i64::MAX)),
        ]
    );
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let file = dir.path().join("chan_0");
    assert!(
        r.warnings[0].starts_with(&format!(
            "{}: at byte {p2_at}: the packet ends at clock value {}, {} ns from the origin: past \
             what 64-bit nanoseconds hold",
            file.display(),
            far + 300,
            far + 300
        )),
        "{:?}",
        r.warnings
    );
}

#[test]
fn content_size_larger_than_packet_size() {
    second_packet_rejected(
        |p| {
            let total = (p.next_event_offset() + p.padding) as u64 * 8;
            p.content_bits = Some(total + 8);
        },
        "bad packet sizes",
    );
}

#[test]
fn unknown_stream_id() {
    second_packet_rejected(|p| p.stream_id = 9, "unknown stream class id 9");
}

#[test]
fn unknown_stream_id_in_first_packet() {
    let mut pkts = three_packets();
    pkts[0].stream_id = 9;
    let (_dir, got, _) = opened(&stream(&pkts));
    assert_eq!(got, vec![dec("chan_0", 0)]);
}

#[test]
fn unknown_event_id() {
    let mut pkts = three_packets();
    let bad_at = pkts[0].next_event_offset();
    pkts[0] = pkts[0].clone().event(20, 1250, &[]).event(TICK, 1260, &[]);
    let (dir, got, _) = opened(&stream(&pkts));
    let mut want = three_packet_events(0).to_vec();
    want.push(dec("chan_0", bad_at as u64));
    want.extend(three_packet_events(1));
    want.extend(three_packet_events(2));
    assert_eq!(got, want);
    let msg = first_error_message(dir.path());
    assert!(msg.contains("unknown event class id 20"), "{msg}");
}

#[test]
fn timestamp_regression_warns_once() {
    // Packet 2 starts before packet 1's last event; packet 3 before packet 2's.
    let p1 = Packet::new(0, 1000, 1900)
        .event(TICK, 1100, &[])
        .event(TICK, 1200, &[]);
    let p2 = Packet::new(1, 500, 900)
        .event(TICK, 600, &[])
        .event(TICK, 700, &[]);
    let p3 = Packet::new(2, 100, 200).event(TICK, 150, &[]);
    let p2_at = p1.bytes().len() + HEADER_LEN;
    let (dir, got, warnings) = opened(&stream(&[p1, p2, p3]));
    assert_eq!(
        got,
        vec![tick(1100), tick(1200), tick(600), tick(700), tick(150)]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let file = dir.path().join("chan_0");
    assert!(
        warnings[0].starts_with(&format!("{}: at byte {p2_at}:", file.display())),
        "{warnings:?}"
    );
}

#[test]
fn discarded_packets_from_sequence_gap() {
    let p1 = Packet::new(0, 1000, 1900).event(TICK, 1100, &[]);
    let p2 = Packet::new(3, 5000, 5900).event(TICK, 5100, &[]);
    let (_dir, got, _) = opened(&stream(&[p1, p2]));
    assert_eq!(
        got,
        vec![
            tick(1100),
            Got::Msg(Message::DiscardedPackets {
                count: 2,
                begin_ns: Some(1900),
                end_ns: Some(5000),
            }),
            tick(5100),
        ]
    );
}

#[test]
fn discarded_events_from_counter() {
    let mk = |k: u64, discarded| {
        let b = 1000 * (k + 1);
        let mut p = Packet::new(k, b, b + 900).event(TICK, b + 100, &[]);
        p.discarded = discarded;
        p
    };
    let (_dir, got, _) = opened(&stream(&[mk(0, 0), mk(1, 5), mk(2, 7)]));
    assert_eq!(
        got,
        vec![
            tick(1100),
            Got::Msg(Message::DiscardedEvents {
                count: 5,
                begin_ns: Some(1900),
                end_ns: Some(2900),
            }),
            tick(2100),
            Got::Msg(Message::DiscardedEvents {
                count: 2,
                begin_ns: Some(2900),
                end_ns: Some(3900),
            }),
            tick(3100),
        ]
    );
}

#[test]
fn missing_metadata_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chan_0"), three_packets()[0].bytes()).unwrap();
    match ctf::open_all(&[dir.path()]) {
        Err(Error::NotATrace { path }) => assert_eq!(path, dir.path()),
        other => panic!("{other:?}"),
    }
    match ctf::Trace::open(dir.path()) {
        Err(Error::Io { path, source }) => {
            assert_eq!(path, dir.path().join("metadata"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn metadata_syntax_error() {
    let dir = tempfile::tempdir().unwrap();
    // Line 13 is `minor = 8;` in the trace block: double its `=`.
    let text: Vec<&str> = KERNEL_TSDL.lines().collect();
    assert_eq!(text[12].trim(), "minor = 8;");
    let broken = KERNEL_TSDL.replacen("minor = 8;", "minor = = 8;", 1);
    write_trace(
        dir.path(),
        &broken,
        &[("chan_0", &three_packets()[0].bytes())],
    );
    match ctf::open_all(&[dir.path()]) {
        Err(Error::Metadata { path, source }) => {
            assert_eq!(path, dir.path().join("metadata"));
            assert_eq!(source.line, Some(13), "{source}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unreadable_stream_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ok = three_packets()[0].bytes();
    let locked = three_packets()[1].bytes();
    write_trace(
        dir.path(),
        KERNEL_TSDL,
        &[("chan_0", &ok), ("chan_1", &locked)],
    );
    let locked_path = dir.path().join("chan_1");
    std::fs::set_permissions(&locked_path, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root (or CAP_DAC_OVERRIDE) reads the file anyway.
    let privileged = std::fs::File::open(&locked_path).is_ok();
    let traces = ctf::open_all(&[dir.path()]).unwrap();
    let t = &traces[0];
    let mut all: Vec<Got> = Vec::new();
    for mut r in t.readers() {
        all.extend(read_all(&mut r));
    }
    if privileged {
        eprintln!("running privileged: chmod 000 does not stop reads; checking a normal read");
        assert!(t.errors.is_empty(), "{:?}", t.errors);
        let mut want = three_packet_events(0).to_vec();
        want.extend(three_packet_events(1));
        assert_eq!(all, want);
    } else {
        assert_eq!(t.errors.len(), 1, "{:?}", t.errors);
        assert!(t.errors[0].contains("chan_1"), "{:?}", t.errors);
        let mut want = three_packet_events(0).to_vec();
        want.push(Got::Other(format!(
            "{}: {}",
            locked_path.display(),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied)
        )));
        // Compare the Io error by path only: the OS message varies.
        assert_eq!(all.len(), want.len(), "{all:?}");
        assert_eq!(all[..2], want[..2]);
        match &all[2] {
            Got::Other(m) => assert!(m.starts_with(&locked_path.display().to_string()), "{m}"),
            g => panic!("{g:?}"),
        }
    }
    std::fs::set_permissions(&locked_path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn empty_stream_file() {
    let dir = one_stream_trace(&[]);
    let traces = ctf::open_all(&[dir.path()]).unwrap();
    assert!(traces[0].errors.is_empty());
    let mut n = 0;
    for mut r in traces[0].readers() {
        n += read_all(&mut r).len();
    }
    assert_eq!(n, 0);
    // The same stream read from memory.
    let t = std::sync::Arc::new(
        ctf::Trace::from_metadata_bytes(KERNEL_TSDL.as_bytes(), "empty").unwrap(),
    );
    assert!(read_all(&mut ctf::StreamReader::from_bytes(t, 0, Vec::new())).is_empty());
}

#[test]
fn directory_without_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/notes.txt"), "hello").unwrap();
    match ctf::open_all(&[dir.path()]) {
        Err(Error::NotATrace { path }) => assert_eq!(path, dir.path()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn from_bytes_matches_file_reading() {
    let bytes = stream(&three_packets());
    let (_dir, from_file, _) = opened(&bytes);
    let t = std::sync::Arc::new(
        ctf::Trace::from_metadata_bytes(KERNEL_TSDL.as_bytes(), "chan_0").unwrap(),
    );
    let from_mem = read_all(&mut ctf::StreamReader::from_bytes(t, 0, bytes));
    assert_eq!(from_file, from_mem);
    assert_eq!(from_mem.len(), 6);
}

// Regressions found by the fuzz targets (inputs under `fuzz/regressions/`).

/// Reads `fuzz/regressions/packet/<name>` as the stream of the fuzz target's trace.
fn packet_regression(name: &str) -> Vec<Got> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/packet")
        .join(name);
    let bytes = std::fs::read(&path).unwrap();
    let t = std::sync::Arc::new(
        ctf::Trace::from_metadata_bytes(KERNEL_TSDL.as_bytes(), "fuzz_stream").unwrap(),
    );
    read_all(&mut ctf::StreamReader::from_bytes(t, 0, bytes))
}

#[test]
fn fuzz_seq_num_overflow() {
    // packet_seq_num u64::MAX, then 0: `prev + 1` overflowed.
    let got = packet_regression("seq_num_overflow");
    assert!(!got.is_empty());
    // No packet gap can be computed across the wrap.
    assert!(!got
        .iter()
        .any(|g| matches!(g, Got::Msg(Message::DiscardedPackets { .. }))));
}

#[test]
fn sequence_number_wrap_is_not_a_gap() {
    let mut p1 = Packet::new(u64::MAX, 1000, 1900).event(TICK, 1100, &[]);
    p1.seq = u64::MAX;
    let p2 = Packet::new(0, 2000, 2900).event(TICK, 2100, &[]);
    let p3 = Packet::new(2, 3000, 3900).event(TICK, 3100, &[]);
    let (_dir, got, _) = opened(&stream(&[p1, p2, p3]));
    assert_eq!(
        got,
        vec![
            tick(1100),
            tick(2100),
            Got::Msg(Message::DiscardedPackets {
                count: 1,
                begin_ns: Some(2900),
                end_ns: Some(3000),
            }),
            tick(3100),
        ]
    );
}

/// Reads `data` as the only stream of a trace whose metadata is `tsdl` (after a trace block).
fn read_with_metadata(tsdl: &str, data: &[u8]) -> Vec<Got> {
    let text =
        format!("/* CTF 1.8 */\ntrace {{ major = 1; minor = 8; byte_order = le; }};\n{tsdl}");
    let t = std::sync::Arc::new(ctf::Trace::from_metadata_bytes(text.as_bytes(), "s").unwrap());
    read_all(&mut ctf::StreamReader::from_bytes(t, 0, data.to_vec()))
}

#[test]
fn huge_array_of_empty_structs_is_refused_quickly() {
    // 2^28 empty structures take no data: decoding them took minutes and ~4 GiB of slots.
    let meta = "typealias integer { size = 8; } := u8;
        stream { event.header := struct { u8 id; }; };
        event { name = \"e\"; id = 0; fields := struct { struct { } a[268435456]; }; };
        event { name = \"f\"; id = 1; fields := struct { u8 n; struct { struct { } b[10000]; } a[n]; }; };";
    let start = std::time::Instant::now();
    // Event 0: refused at the array (byte 1).
    assert_eq!(read_with_metadata(meta, &[0, 0]), vec![dec("s", 1)]);
    // Event 1 with n = 3: 3 × 10000 empty elements are fine.
    let got = read_with_metadata(meta, &[1, 3]);
    assert_eq!(got.len(), 1);
    let Got::Event(name, _, Value::Struct(v)) = &got[0] else {
        panic!("not an event")
    };
    assert_eq!(name, "f");
    let want = Value::Array(vec![
        Value::Struct(vec![Value::Array(vec![
            Value::Struct(
                vec![]
            );
            10000
        ])]);
        3
    ]);
    assert!(v[1] == want, "unexpected payload");
    // n = 255: 255 × 10000 empty elements are refused, at the outer array (byte 2).
    assert_eq!(read_with_metadata(meta, &[1, 255]), vec![dec("s", 2)]);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn payload_members_by_preresolved_index_match_names() {
    let pkts = three_packets();
    let dir = one_stream_trace(&stream(&pkts));
    let traces = ctf::open_all(&[dir.path()]).unwrap();
    let mut r = traces[0].readers().remove(0);
    let mut checked = 0;
    while let Some(m) = r.next() {
        if !matches!(m, Ok(ctf::Message::Event)) {
            continue;
        }
        let ev = r.event();
        let layout = &traces[0].layout;
        let names: Vec<String> = match ev.payload().map(|p| p.value()) {
            Some(ctf::FieldValue::Struct(m)) => m.map(|(n, _)| n.to_string()).collect(),
            _ => vec![],
        };
        for (i, name) in names.iter().enumerate() {
            let idx = ev.class_layout().payload_index(layout, name).unwrap();
            assert_eq!(idx, i);
            let by_index = ev.payload_member(idx).unwrap().to_value();
            let by_name = ev.field(name).unwrap().to_value();
            assert_eq!(by_index, by_name, "{} {name}", ev.name());
            checked += 1;
        }
        assert!(ev.payload_member(names.len()).is_none());
    }
    assert!(checked >= 6, "only {checked} fields checked");
}

#[test]
fn packet_time_bounds_come_from_packet_contexts() {
    // Packets: [1000, 1900], [2000, 2900], [3000, 3900] cycles of a 1 GHz clock; a trailing
    // empty packet stretches the range as LTTng's final packets do.
    let mut pkts = three_packets();
    pkts.push(Packet::new(3, 4000, 5000));
    let dir = one_stream_trace(&stream(&pkts));
    let traces = ctf::open_all(&[dir.path()]).unwrap();
    let r = traces[0].readers().remove(0);
    let origin = traces[0].class.clocks[0].cycles_to_ns(0) as i64;
    assert_eq!(r.packet_time_bounds(), Some((origin + 1000, origin + 5000)));
}
