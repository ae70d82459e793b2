//! Arbitrary kernel traces: events of every class of the generated LTTng kernel layout
//! ([`kernel::lttng`]) in any order, with any field values, on one to four CPUs,
//! cut into packets anywhere and with discarded events counted anywhere. The values come
//! from an [`Entropy`]: a seeded generator for the tests, the fuzzer's input for the fuzz
//! target, so one generator serves both.
//!
//! The trace is well formed as CTF (lengths and variant tags agree with what follows, each
//! stream's clock never goes back); what it says is not: a thread may leave a CPU it never
//! ran on, a system call may return twice, a file descriptor may be `-1` or 2^31. Values are
//! drawn mostly from small pools so that events meet (the same thread, descriptor, IRQ or
//! CPU), and otherwise from the edges of their type.

use std::path::Path;

use ctf::ir::{ByteOrder, Encoding, EventClass, FieldType, IntType, StructType};
use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriteError, WriterOptions};

use kernel::lttng::{trace_class, with_byte_order, HostInfo, NetLayout};

/// A source of arbitrary words.
pub trait Entropy {
    /// The next word.
    fn word(&mut self) -> u64;

    /// Whether the source has nothing more to say (a fuzzer's input used up).
    fn done(&self) -> bool {
        false
    }

    /// A value in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.word() % n
    }
}

impl Entropy for crate::rng::Rng {
    fn word(&mut self) -> u64 {
        self.next_u64()
    }
}

/// Words read from a byte string (a fuzzer's input), then zeros once it is used up.
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Words from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }
}

impl Entropy for Bytes<'_> {
    fn done(&self) -> bool {
        self.data.is_empty()
    }

    fn word(&mut self) -> u64 {
        // Two bytes a word: most choices are small, and a fuzzer mutates shorter inputs
        // more effectively.
        let n = self.data.len().min(2);
        let mut w = 0u64;
        for &b in &self.data[..n] {
            w = (w << 8) | b as u64;
        }
        self.data = &self.data[n..];
        w
    }
}

/// What [`write_chaos_trace`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChaosTrace {
    /// CPUs (one stream each).
    pub cpus: u32,
    /// Events written.
    pub events: u64,
    /// Events counted as discarded (lost) in packet contexts.
    pub discarded: u64,
    /// Whether each system call entry was followed by its exit on its CPU.
    pub paired_syscalls: bool,
    /// Big-endian byte order (else little-endian).
    pub big_endian: bool,
    /// Large event headers (16-bit ids) rather than compact ones (5-bit ids).
    pub large_headers: bool,
}

/// Strings events carry: empty (first, see [`ChaosOptions::empty_texts`]), names the model
/// knows, long, and not UTF-8.
const STRINGS: &[&[u8]] = &[
    b"",
    b"bash",
    b"swapper/0",
    b"eth0",
    b"sda",
    b"/dev/sda1",
    b"/tmp/file",
    b"socket:[1234]",
    b"kworker/0:1H-kblockd",
    b"a name longer than sixteen bytes, as a comm never is",
    b"\xff\xfe\x80 not utf-8",
    b"%s %n {} \" \\",
];

/// What [`write_chaos_trace`] may write.
#[derive(Debug, Clone)]
pub struct ChaosOptions {
    /// Events at most (fewer when the source is [`Entropy::done`] first).
    pub max_events: usize,
    /// Whether texts (strings and `char` arrays) may be empty. Babeltrace 2.0.4 prints an
    /// empty text as the last value the same field of the same event class had, so a
    /// comparison with its output leaves them out.
    pub empty_texts: bool,
    /// The trace's UUID. Traces of one UUID are copies of one trace to a reader (snapshots of
    /// a session), so traces meant to be read together as several need different ones.
    pub trace_uuid: [u8; 16],
}

impl ChaosOptions {
    /// At most `max_events` events, empty texts included.
    pub fn events(max_events: usize) -> Self {
        ChaosOptions {
            max_events,
            empty_texts: true,
            trace_uuid: [0x5a; 16],
        }
    }
}

/// Writes an arbitrary kernel trace in `dir` (created).
pub fn write_chaos_trace(
    dir: &Path,
    src: &mut dyn Entropy,
    opts: &ChaosOptions,
) -> Result<ChaosTrace, WriteError> {
    let host = HostInfo {
        hostname: "chaos".into(),
        trace_uuid: opts.trace_uuid,
        clock_uuid: [0x5b; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240305T101500+0000".into(),
        trace_name: "chaos".into(),
        kernel_release: "6.1.0".into(),
    };
    // The layouts LTTng writes: compact or large event headers, either byte order, the
    // network events of lttng-modules 2.13 or of older versions.
    let large = src.below(2) == 0;
    let header = if large {
        EventHeaderKind::Large
    } else {
        EventHeaderKind::Compact
    };
    let net = if src.below(4) == 0 {
        NetLayout::InetSock
    } else {
        NetLayout::NetworkHeader
    };
    let mut class = trace_class(&host, net, header);
    let big_endian = src.below(2) == 0;
    if big_endian {
        class = with_byte_order(&class, ByteOrder::Big)?;
    }
    let events: Vec<&EventClass> = class
        .streams
        .values()
        .flat_map(|s| s.events.values())
        .collect();
    // A system call entry's exit class, for the traces whose calls come in pairs.
    let exit_of = |e: &EventClass| {
        let call = e.name.strip_prefix("syscall_entry_")?;
        events
            .iter()
            .position(|x| x.name.strip_prefix("syscall_exit_") == Some(call))
    };
    let exits: Vec<Option<usize>> = events.iter().map(|e| exit_of(e)).collect();
    let cpus = 1 + src.below(4) as u32;
    let mut w = TraceWriter::create(dir, &class, cpus, &WriterOptions::default())?;
    let mut out = ChaosTrace {
        cpus,
        big_endian,
        large_headers: large,
        ..Default::default()
    };
    // Half the traces lose events, half are whole (which the analyses read differently).
    let lossy = src.below(2) == 0;
    // In half the traces, a system call's exit follows its entry on the CPU at the same
    // time (so that no event of another CPU comes between, where the same thread may run
    // too), and there are no other exits: a thread's calls do not interleave, as on Linux.
    // In the others, entries and exits come in any order.
    let paired = src.below(2) == 0;
    out.paired_syscalls = paired;
    // Clocks start near zero, or where nanoseconds since the epoch no longer fit an i64
    // (the clock's offset is 1.7e18 ns), or near the end of the 64-bit cycle counter.
    let start = match src.below(8) {
        0 => (i64::MAX as u64) - 1_700_000_000_000_000_000 - src.below(1 << 40),
        1 => u64::MAX - (1 << 42) - src.below(1 << 40),
        _ => 1_000,
    };
    let mut clocks = vec![start; cpus as usize];
    let no_payload = StructType::default();
    while (out.events as usize) < opts.max_events && !src.done() {
        let cpu = src.below(cpus as u64) as u32;
        match src.below(64) {
            0 => w.flush()?,
            1 if lossy => {
                let n = 1 + src.below(3);
                w.add_discarded(cpu, n)?;
                out.discarded += n;
            }
            _ => {}
        }
        let i = src.below(events.len() as u64) as usize;
        if paired && exits.contains(&Some(i)) {
            continue;
        }
        let exit = exits[i].filter(|_| paired);
        for class in std::iter::once(i).chain(exit) {
            let clock = &mut clocks[cpu as usize];
            if Some(class) != exit {
                *clock = clock.saturating_add(match src.below(8) {
                    0 => 0,
                    1..=4 => src.below(1_000),
                    5 | 6 => src.below(1_000_000),
                    _ => src.below(2_000_000_000),
                });
            }
            let e = events[class];
            let payload = e.payload.as_ref().unwrap_or(&no_payload);
            let mut values = struct_values(payload, src, opts);
            fix_up(payload, &mut values);
            w.write_event(cpu, e.id, *clock, &values)?;
            out.events += 1;
        }
    }
    w.finish()?;
    Ok(out)
}

fn struct_values(s: &StructType, src: &mut dyn Entropy, opts: &ChaosOptions) -> Vec<Value> {
    s.fields
        .iter()
        .map(|f| value_of(&f.ty, src, opts))
        .collect()
}

fn value_of(ty: &FieldType, src: &mut dyn Entropy, opts: &ChaosOptions) -> Value {
    match ty {
        FieldType::Int(i) => int_value(i, src),
        FieldType::Enum(e) => {
            // A declared value most of the time, anything otherwise.
            let declared = e
                .mappings
                .get(src.below(e.mappings.len() as u64 + 1) as usize)
                .and_then(|m| m.ranges.first());
            match declared {
                Some(r) if e.int.signed => Value::I64(r.lower as i64),
                Some(r) => Value::U64(r.lower as u64),
                None => int_value(&e.int, src),
            }
        }
        FieldType::Float(_) => {
            Value::Float([0.0, -1.5, 1e300, f64::NAN, f64::INFINITY][src.below(5) as usize])
        }
        FieldType::String(_) => Value::Str(text(src, opts).to_vec()),
        FieldType::Struct(s) => Value::Struct(struct_values(s, src, opts)),
        FieldType::Array(a) => match &*a.elem {
            // `comm` and other fixed-size text.
            FieldType::Int(i) if i.size == 8 && i.encoding != Encoding::None => {
                let mut bytes = text(src, opts).to_vec();
                bytes.resize(a.len as usize, 0);
                Value::Array(bytes.into_iter().map(|b| Value::U64(b as u64)).collect())
            }
            elem => Value::Array((0..a.len).map(|_| value_of(elem, src, opts)).collect()),
        },
        FieldType::Sequence(s) => {
            let n = match src.below(8) {
                0 => 0,
                7 => src.below(40),
                _ => 1 + src.below(4),
            };
            Value::Array((0..n).map(|_| value_of(&s.elem, src, opts)).collect())
        }
        FieldType::Variant(v) if !v.options.is_empty() => {
            let i = src.below(v.options.len() as u64) as usize;
            Value::Variant(i, Box::new(value_of(&v.options[i].ty, src, opts)))
        }
        // CTF 2 types, not in a CTF 1.8 kernel trace.
        _ => Value::Absent,
    }
}

/// An integer of type `i`: a small value most of the time (events then share threads,
/// descriptors, CPUs and IRQs), else one from the edges of the type.
fn int_value(i: &IntType, src: &mut dyn Entropy) -> Value {
    let bits = i.size.clamp(1, 64);
    let raw: u64 = match src.below(16) {
        0..=7 => src.below(8),
        8 | 9 => src.below(300),
        10 => u64::MAX,                       // -1
        11 => u64::MAX >> (65 - bits.max(2)), // largest positive
        12 => 1u64 << (bits - 1),             // smallest negative, or half the range
        13 => src.word() ^ src.word().rotate_left(29),
        14 => 1_000 + src.below(10),
        _ => 1u64 << src.below(bits as u64),
    };
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let v = raw & mask;
    if i.signed {
        // Sign-extended from the type's width.
        let shift = 64 - bits;
        Value::I64(((v << shift) as i64) >> shift)
    } else {
        Value::U64(v)
    }
}

fn text(src: &mut dyn Entropy, opts: &ChaosOptions) -> &'static [u8] {
    let from = if opts.empty_texts { 0 } else { 1 };
    STRINGS[from + src.below(STRINGS.len() as u64 - from as u64) as usize]
}

/// Makes each sequence's length field hold its element count and each variant's tag select
/// its option, as a tracer writes them.
fn fix_up(payload: &StructType, values: &mut [Value]) {
    let mut sets = Vec::new();
    collect_sets(payload, values, &mut sets);
    for (path, v) in sets {
        if let Some(slot) = at_path(values, &path) {
            *slot = match slot {
                Value::I64(_) => Value::I64(v as i64),
                _ => Value::U64(v as u64),
            };
        }
    }
}

/// The (field path, value) assignments the sequences and variants under `s` need.
fn collect_sets(s: &StructType, values: &[Value], sets: &mut Vec<(Vec<usize>, i128)>) {
    for (f, v) in s.fields.iter().zip(values) {
        collect_field(&f.ty, v, sets);
    }
}

fn collect_field(ty: &FieldType, v: &Value, sets: &mut Vec<(Vec<usize>, i128)>) {
    match (ty, v) {
        (FieldType::Struct(s), Value::Struct(vs)) => collect_sets(s, vs, sets),
        (FieldType::Sequence(s), Value::Array(items)) => {
            sets.push((s.length.indices.clone(), items.len() as i128));
            for item in items {
                collect_field(&s.elem, item, sets);
            }
        }
        (FieldType::Array(a), Value::Array(items)) => {
            for item in items {
                collect_field(&a.elem, item, sets);
            }
        }
        (FieldType::Variant(var), Value::Variant(i, inner)) => {
            if let Some(r) = var.options.get(*i).and_then(|o| o.ranges.first()) {
                sets.push((var.tag.indices.clone(), r.lower));
            }
            if let Some(o) = var.options.get(*i) {
                collect_field(&o.ty, inner, sets);
            }
        }
        _ => {}
    }
}

/// The value at `path` from the payload's members down.
fn at_path<'v>(values: &'v mut [Value], path: &[usize]) -> Option<&'v mut Value> {
    let (first, rest) = path.split_first()?;
    let v = values.get_mut(*first)?;
    if rest.is_empty() {
        return Some(v);
    }
    descend(v, rest)
}

/// The value at `path` below `v`: member indices through structures, option indices through
/// variants (as the trace class's field paths give them).
fn descend<'v>(v: &'v mut Value, path: &[usize]) -> Option<&'v mut Value> {
    match v {
        Value::Struct(inner) => at_path(inner, path),
        Value::Variant(i, inner) => {
            let (option, rest) = path.split_first()?;
            if option != i {
                return None;
            }
            if rest.is_empty() {
                return Some(inner);
            }
            descend(inner, rest)
        }
        _ => None,
    }
}
