//! Metadata parsing micro-benchmarks: what opening a trace costs before any event is read.
//!
//!   cargo bench -p tracekit-ctf --bench metadata
//!   TRACEKIT_SHARED=/work/shared cargo bench -p tracekit-ctf --bench metadata
//!
//! - `tsdl/generated`: `tsdl::parse` of a generated LTTng-kernel-like metadata text
//!   (`METADATA_BENCH_EVENTS` event classes, default 1,200, about 300 KB) whose classes mix
//!   inline integers, typealiased integers, strings, text arrays and sequences.
//! - `tsdl/generated_layout`: the same text parsed and compiled to its decoding layout
//!   (`Layout::compile`), as `Trace::open` does.
//! - `tsdl/many_threads`: the 311 KB metadata of the shared `kernel/many-threads` trace, parsed
//!   and compiled, when `TRACEKIT_SHARED` points at the shared data.

use std::fmt::Write;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// An LTTng-kernel-like metadata text with `events` event classes.
fn generated(events: usize) -> String {
    let mut t = String::from(
        r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;

trace {
	major = 1;
	minor = 8;
	uuid = "69861fba-fe44-2b41-b75b-39acaf6930ec";
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint8_t  uuid[16];
		uint32_t stream_id;
		uint64_t stream_instance_id;
	};
};

env {
	hostname = "bench";
	domain = "kernel";
	tracer_name = "lttng-modules";
	tracer_major = 2;
};

clock {
	name = "monotonic";
	uuid = "e0ff1bac-aa1d-451d-a8c1-10cb8d315d45";
	description = "Monotonic Clock";
	freq = 1000000000; /* Frequency, in Hz */
	offset = 1457111225177515989;
};

typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;

struct packet_context {
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	unsigned long events_discarded;
	uint32_t cpu_id;
};

struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct {
			uint27_clock_monotonic_t timestamp;
		} compact;
		struct {
			uint32_t id;
			uint64_clock_monotonic_t timestamp;
		} extended;
	} v;
} align(8);

stream {
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct packet_context;
};
"#,
    );
    let int = |size: u32, signed: bool| {
        format!(
            "integer {{ size = {size}; align = 8; signed = {}; encoding = none; base = 10; }}",
            signed as u8
        )
    };
    for i in 0..events {
        let _ = write!(
            t,
            "\nevent {{\n\tname = \"syscall_{i}\";\n\tid = {i};\n\tstream_id = 0;\n\tfields := struct {{\n"
        );
        let _ = writeln!(t, "\t\t{} _ret;", int(64, true));
        match i % 4 {
            0 => {
                let _ = writeln!(t, "\t\t{} _fd;", int(32, true));
                let _ = writeln!(t, "\t\tstring _filename;");
            }
            1 => {
                let _ = writeln!(t, "\t\tinteger {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _comm[16];");
                let _ = writeln!(t, "\t\tuint32_t _tid;");
                let _ = writeln!(t, "\t\t{} _prio;", int(32, true));
            }
            2 => {
                let _ = writeln!(t, "\t\t{} __args_length;", int(8, false));
                let _ = writeln!(t, "\t\t{} _args[ __args_length ];", int(64, false));
            }
            _ => {}
        }
        t.push_str("\t};\n};\n");
    }
    t
}

fn benches(c: &mut Criterion) {
    let events = std::env::var("METADATA_BENCH_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_200);
    let text = generated(events);
    let mut g = c.benchmark_group("tsdl");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("generated", |b| {
        b.iter(|| black_box(ctf::tsdl::parse(black_box(&text)).expect("parses")))
    });
    g.bench_function("generated_layout", |b| {
        b.iter(|| {
            let tc = ctf::tsdl::parse(black_box(&text)).expect("parses");
            black_box(ctf::access::Layout::compile(&tc).expect("compiles"))
        })
    });
    if let Ok(shared) = std::env::var("TRACEKIT_SHARED") {
        let path = std::path::Path::new(&shared).join("traces/kernel/many-threads/metadata");
        match std::fs::read(&path) {
            Ok(bytes) => {
                g.throughput(Throughput::Bytes(bytes.len() as u64));
                g.bench_function("many_threads", |b| {
                    b.iter(|| {
                        let tc = ctf::metadata::parse(black_box(&bytes)).expect("parses");
                        black_box(ctf::access::Layout::compile(&tc).expect("compiles"))
                    })
                });
            }
            Err(e) => eprintln!(
                "metadata bench: {}: {e}; skipping many_threads",
                path.display()
            ),
        }
    }
    g.finish();
}

criterion_group!(metadata, benches);
criterion_main!(metadata);
