//! Decoder micro-benchmarks on a generated LTTng-like kernel trace.
//!
//!   cargo bench -p tracekit-ctf --bench decode
//!   DECODE_BENCH_EVENTS=2000000 cargo bench -p tracekit-ctf --bench decode
//!
//! Setup generates a `kernel-mix` trace (default 1 M events on 4 CPUs, seed 1) into a temporary
//! directory with `scenario::kernel_mix::generate`, opens it once and maps it into the page
//! cache; the directory is removed at the end. Throughput is reported in events per second.
//!
//! - `stream/next`: one stream file (CPU 0), `StreamReader::next` only — packet and event
//!   headers, timestamps, and whatever the reader decodes eagerly.
//! - `stream/all_fields`: the same stream, and every field of every event visited (what
//!   `tracekit count` does per stream).
//! - `merge/4_streams`: the four streams merged in time order by `Merger` (what `tracekit
//!   print` does before formatting).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ctf::{FieldValue, FieldView, Merger, Message, Trace};

/// Generated trace directory, removed on drop.
struct TempTrace(PathBuf);

impl Drop for TempTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn generate() -> (TempTrace, Arc<Trace>) {
    let events = std::env::var("DECODE_BENCH_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let root = std::env::temp_dir().join(format!("tracekit-decode-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("create temporary directory");
    let guard = TempTrace(root.clone());
    let dir = root.join("kernel-mix");
    let params = scenario::kernel_mix::KernelMixParams {
        seed: 1,
        events,
        cpus: 4,
        ..Default::default()
    };
    let stats = scenario::kernel_mix::generate(&dir, &params).expect("generate kernel-mix");
    eprintln!(
        "decode bench: {} events, {} bytes, per CPU {:?} in {}",
        stats.events,
        stats.bytes,
        stats.per_cpu,
        dir.display()
    );
    let trace = Arc::new(Trace::open(&dir).expect("open generated trace"));
    (guard, trace)
}

/// Touches every decoded value (as `tracekit count` does).
fn visit(v: &FieldView<'_>) -> u64 {
    match v.value() {
        FieldValue::UInt { value, .. } | FieldValue::Bits(value) => value,
        FieldValue::SInt { value, .. } => value as u64,
        FieldValue::Bool(b) => b as u64,
        FieldValue::Float(f) => f.to_bits(),
        FieldValue::Str(s) | FieldValue::Blob(s) => s.len() as u64,
        FieldValue::Struct(m) => m.map(|(_, f)| visit(&f)).fold(0, u64::wrapping_add),
        FieldValue::Array(e) => e.map(|f| visit(&f)).fold(0, u64::wrapping_add),
        FieldValue::Variant(_, f) => visit(&f),
        FieldValue::Optional(o) => o.map_or(0, |f| visit(&f)),
    }
}

/// Events of stream 0, reading messages only.
fn stream_next(trace: &Arc<Trace>) -> u64 {
    let mut r = ctf::StreamReader::new(trace.clone(), 0);
    let mut n = 0u64;
    while let Some(m) = r.next() {
        if let Ok(Message::Event) = m {
            n += 1;
        }
    }
    n
}

/// Events of stream 0, visiting every field; returns (events, checksum).
fn stream_all_fields(trace: &Arc<Trace>) -> (u64, u64) {
    let mut r = ctf::StreamReader::new(trace.clone(), 0);
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(m) = r.next() {
        if let Ok(Message::Event) = m {
            let ev = r.event();
            n += 1;
            sum = sum.wrapping_add(ev.time_ns().unwrap_or(0) as u64);
            for v in [ev.common_context(), ev.specific_context(), ev.payload()]
                .into_iter()
                .flatten()
            {
                sum = sum.wrapping_add(visit(&v));
            }
        }
    }
    (n, sum)
}

/// Events of all streams, merged in time order.
fn merge_all(trace: &Arc<Trace>) -> u64 {
    let traces = [trace.clone()];
    let mut m = Merger::new(&traces);
    let mut n = 0u64;
    while let Some(msg) = m.next() {
        if let Message::Event = msg {
            n += 1;
            black_box(m.current_time());
        }
    }
    n
}

fn benches(c: &mut Criterion) {
    let (_guard, trace) = generate();

    // Warm the page cache and count what each benchmark goes through.
    let stream_events = stream_next(&trace);
    let total_events = merge_all(&trace);
    assert!(stream_events > 0 && total_events >= stream_events);

    let mut g = c.benchmark_group("stream");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(8));
    g.throughput(Throughput::Elements(stream_events));
    g.bench_function("next", |b| b.iter(|| black_box(stream_next(&trace))));
    g.bench_function("all_fields", |b| {
        b.iter(|| black_box(stream_all_fields(&trace)))
    });
    g.finish();

    let mut g = c.benchmark_group("merge");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(8));
    g.throughput(Throughput::Elements(total_events));
    g.bench_function("4_streams", |b| b.iter(|| black_box(merge_all(&trace))));
    g.finish();
}

criterion_group!(decode, benches);
criterion_main!(decode);
