//! How a trace's stream files are grouped into streams when it is opened: files of one stream
//! instance (tracefile rotation) are chained in the order of their first packet's start time,
//! which opening reads from each file's first packet header and context.

use ctf::Trace;

/// A trace whose packet header puts the stream ids after `pad` bytes, with one event class.
fn metadata(pad: usize) -> String {
    format!(
        r#"/* CTF 1.8 */
typealias integer {{ size = 8; align = 8; signed = false; }} := uint8_t;
typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;
typealias integer {{ size = 64; align = 8; signed = false; }} := uint64_t;
trace {{
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct {{
		uint32_t magic;
		uint8_t pad[{pad}];
		uint32_t stream_id;
		uint64_t stream_instance_id;
	}};
}};
clock {{ name = "monotonic"; freq = 1000000000; offset = 0; }};
typealias integer {{ size = 64; align = 8; signed = false; map = clock.monotonic.value; }} := uint64_clock_t;
stream {{
	id = 0;
	packet.context := struct {{
		uint64_clock_t timestamp_begin;
		uint64_clock_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
	}};
	event.header := struct {{
		uint32_t id;
		uint64_clock_t timestamp;
	}};
}};
event {{
	name = "tick";
	id = 0;
	stream_id = 0;
	fields := struct {{ uint32_t n; }};
}};
"#
    )
}

/// One packet of stream instance `instance` holding one `tick` event with value `n` at time
/// `ts` (the packet's start).
fn packet(pad: usize, instance: u64, ts: u64, n: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
    b.resize(b.len() + pad, 0);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&instance.to_le_bytes());
    let context_at = b.len();
    b.resize(context_at + 32, 0);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&ts.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    let bits = (b.len() * 8) as u64;
    for (i, v) in [ts, ts, bits, bits].into_iter().enumerate() {
        b[context_at + 8 * i..context_at + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Values of the `tick` events of every stream of the trace, stream by stream.
fn ticks(trace: &std::sync::Arc<Trace>) -> Vec<Vec<u64>> {
    trace
        .readers()
        .into_iter()
        .map(|mut r| {
            let mut out = Vec::new();
            while let Some(m) = r.next() {
                if let Ok(ctf::Message::Event) = m {
                    let ev = r.event();
                    out.push(ev.payload_member(0).and_then(|f| f.as_u64()).unwrap_or(0));
                }
            }
            out
        })
        .collect()
}

/// Files named so that their name order is not their time order: `b` holds the first packet.
fn rotated_trace(pad: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata"), metadata(pad)).unwrap();
    std::fs::write(dir.path().join("chan_0_a"), packet(pad, 7, 2000, 2)).unwrap();
    std::fs::write(dir.path().join("chan_0_b"), packet(pad, 7, 1000, 1)).unwrap();
    std::fs::write(dir.path().join("chan_1"), packet(pad, 8, 1500, 3)).unwrap();
    dir
}

fn check_rotation(pad: usize) {
    let dir = rotated_trace(pad);
    let trace = std::sync::Arc::new(Trace::open(dir.path()).unwrap());
    assert!(trace.errors.is_empty(), "{:?}", trace.errors);
    let files: Vec<Vec<String>> = trace
        .streams
        .iter()
        .map(|s| {
            s.files
                .iter()
                .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    assert_eq!(files, [vec!["chan_0_b", "chan_0_a"], vec!["chan_1"]]);
    assert_eq!(trace.streams[0].stream_id, Some(7));
    assert_eq!(ticks(&trace), [vec![1, 2], vec![3]]);
}

#[test]
fn files_of_one_stream_instance_are_chained_in_time_order() {
    check_rotation(16);
}

/// Opening reads the first page of each file; a header and context that go past it are read
/// from the whole file.
#[test]
fn a_packet_header_longer_than_a_page_still_groups_the_files() {
    check_rotation(5000);
}

#[test]
fn an_empty_stream_file_is_no_stream() {
    let dir = rotated_trace(16);
    std::fs::write(dir.path().join("chan_2"), b"").unwrap();
    let trace = Trace::open(dir.path()).unwrap();
    assert!(trace.errors.is_empty(), "{:?}", trace.errors);
    assert_eq!(trace.streams.len(), 2);
}
