//! The same binary data streams described by CTF 1.8 (TSDL, written by the writer) and by CTF 2
//! (JSON, built here from the same trace class, since the writer only writes CTF 1.8) must decode
//! to identical events.
//!
//! Mapping used for CTF 2: integers → fixed-length (un)signed integers, enumerations → the same
//! with `mappings`, UTF-8 8-bit static arrays → static-length strings, the packet header's UUID
//! array → a static-length BLOB, sequences → dynamic-length arrays and variants → variants, both
//! with relative field locations; roles as the TSDL front end assigns them.

use std::fmt::Write as _;
use std::path::Path;

use ctf::ir::{
    ArrayType, ByteOrder, ClockClass, DisplayBase, Encoding, EnumMapping, EnumType, EventClass,
    Field, FieldPath, FieldType, FloatType, IntRange, IntType, Role, Scope, SequenceType,
    StringType, StructType, TraceClass, VariantOption, VariantType,
};
use ctf::value::Value;
use ctf::writer::{lttng, EventHeaderKind, MetadataMode, TraceWriter, WriterOptions};

const UUID: [u8; 16] = [
    0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01,
];

// ---------------------------------------------------------------------------------------------
// The trace class

fn int(size: u32, align: u32, signed: bool, bo: ByteOrder) -> IntType {
    IntType {
        size,
        align,
        signed,
        byte_order: bo,
        base: DisplayBase::Decimal,
        encoding: Encoding::None,
        mapped_clock: None,
        role: None,
    }
}

fn fld(name: &str, ty: FieldType) -> Field {
    Field {
        name: name.into(),
        ty,
    }
}

fn range(lower: i128, upper: i128) -> IntRange {
    IntRange { lower, upper }
}

/// A payload with every kind CTF 1.8 and CTF 2 share.
fn payload_a(bo: ByteOrder) -> StructType {
    let other = match bo {
        ByteOrder::Little => ByteOrder::Big,
        ByteOrder::Big => ByteOrder::Little,
    };
    let p = |i: &[usize]| FieldPath {
        scope: Scope::EventPayload,
        indices: i.to_vec(),
    };
    StructType {
        min_align: 8,
        fields: vec![
            fld("bits3", FieldType::Int(int(3, 1, false, bo))),
            fld("sbits13", FieldType::Int(int(13, 1, true, bo))),
            fld("u64", FieldType::Int(int(64, 8, false, bo))),
            fld("s32_swapped", FieldType::Int(int(32, 32, true, other))),
            fld(
                "state",
                FieldType::Enum(EnumType {
                    int: int(7, 1, true, bo),
                    mappings: vec![
                        EnumMapping {
                            label: "NEG".into(),
                            ranges: vec![range(-64, -1)],
                        },
                        EnumMapping {
                            label: "LOW".into(),
                            ranges: vec![range(0, 9), range(20, 20)],
                        },
                    ],
                }),
            ),
            fld(
                "f32",
                FieldType::Float(FloatType {
                    exp_dig: 8,
                    mant_dig: 24,
                    byte_order: bo,
                    align: 32,
                }),
            ),
            fld(
                "f64_swapped",
                FieldType::Float(FloatType {
                    exp_dig: 11,
                    mant_dig: 53,
                    byte_order: other,
                    align: 64,
                }),
            ),
            fld(
                "name",
                FieldType::String(StringType {
                    encoding: Encoding::Utf8,
                }),
            ),
            fld(
                "comm",
                FieldType::Array(ArrayType {
                    elem: Box::new(FieldType::Int(IntType {
                        encoding: Encoding::Utf8,
                        ..int(8, 8, false, bo)
                    })),
                    len: 6,
                    min_align: 1,
                    role: None,
                }),
            ),
            fld(
                "arr",
                FieldType::Array(ArrayType {
                    elem: Box::new(FieldType::Int(int(12, 1, false, bo))),
                    len: 3,
                    min_align: 1,
                    role: None,
                }),
            ),
            fld("n", FieldType::Int(int(8, 8, false, bo))),
            fld(
                "seq",
                FieldType::Sequence(SequenceType {
                    elem: Box::new(FieldType::Struct(StructType {
                        min_align: 1,
                        fields: vec![
                            fld("a", FieldType::Int(int(16, 16, false, bo))),
                            fld(
                                "s",
                                FieldType::String(StringType {
                                    encoding: Encoding::Utf8,
                                }),
                            ),
                        ],
                    })),
                    length: p(&[10]),
                    min_align: 1,
                }),
            ),
            fld(
                "tag",
                FieldType::Enum(EnumType {
                    int: int(8, 8, false, bo),
                    mappings: vec![
                        EnumMapping {
                            label: "num".into(),
                            ranges: vec![range(0, 0), range(3, 4)],
                        },
                        EnumMapping {
                            label: "txt".into(),
                            ranges: vec![range(1, 1)],
                        },
                        EnumMapping {
                            label: "pair".into(),
                            ranges: vec![range(2, 2)],
                        },
                    ],
                }),
            ),
            fld(
                "var",
                FieldType::Variant(VariantType {
                    tag: p(&[12]),
                    options: vec![
                        VariantOption {
                            name: "num".into(),
                            ty: FieldType::Int(int(32, 8, true, bo)),
                            ranges: vec![range(0, 0), range(3, 4)],
                        },
                        VariantOption {
                            name: "txt".into(),
                            ty: FieldType::String(StringType {
                                encoding: Encoding::Utf8,
                            }),
                            ranges: vec![range(1, 1)],
                        },
                        VariantOption {
                            name: "pair".into(),
                            ty: FieldType::Struct(StructType {
                                min_align: 1,
                                fields: vec![
                                    fld("x", FieldType::Int(int(5, 1, false, bo))),
                                    fld("y", FieldType::Int(int(64, 64, true, bo))),
                                ],
                            }),
                            ranges: vec![range(2, 2)],
                        },
                    ],
                }),
            ),
            fld(
                "nested",
                FieldType::Struct(StructType {
                    min_align: 32,
                    fields: vec![
                        fld("b", FieldType::Int(int(1, 1, false, bo))),
                        fld("w", FieldType::Int(int(48, 8, false, bo))),
                    ],
                }),
            ),
        ],
    }
}

fn trace_class(bo: ByteOrder, header: EventHeaderKind) -> TraceClass {
    let clock = ClockClass {
        name: "monotonic".into(),
        freq: 1_000_000_000,
        offset_s: 1_600_000_000,
        offset_cycles: 42,
        precision: 0,
        uuid: None,
        absolute: false,
        description: None,
    };
    let mut tc = lttng::skeleton(
        UUID,
        bo,
        clock,
        vec![
            ("hostname".into(), ctf::ir::EnvValue::Str("equiv".into())),
            ("answer".into(), ctf::ir::EnvValue::Int(42)),
        ],
        header,
    );
    let sc = tc.streams.get_mut(&0).unwrap();
    sc.events.insert(
        1,
        EventClass {
            id: 1,
            name: "kind_a".into(),
            loglevel: None,
            model_emf_uri: None,
            context: Some(StructType {
                min_align: 8,
                fields: vec![fld("tid", FieldType::Int(int(32, 8, true, bo)))],
            }),
            payload: Some(payload_a(bo)),
        },
    );
    // An id beyond the compact header's range: every such event uses the extended header.
    sc.events.insert(
        40,
        EventClass {
            id: 40,
            name: "sched:kind_b".into(),
            loglevel: None,
            model_emf_uri: None,
            context: None,
            payload: Some(StructType {
                min_align: 8,
                fields: vec![fld("v", FieldType::Int(int(16, 8, false, bo)))],
            }),
        },
    );
    tc
}

// ---------------------------------------------------------------------------------------------
// Events

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn text(&mut self, max: u64) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| b'a' + self.below(26) as u8).collect()
    }
}

fn sext(v: u64, bits: u32) -> i64 {
    ((v << (64 - bits)) as i64) >> (64 - bits)
}

fn payload_a_values(r: &mut Rng) -> Vec<Value> {
    let n = r.below(4);
    let seq = (0..n)
        .map(|_| Value::Struct(vec![Value::U64(r.below(65536)), Value::Str(r.text(5))]))
        .collect();
    let tag = r.below(5);
    let var = match tag {
        0 | 3 | 4 => Value::Variant(0, Box::new(Value::I64(sext(r.next(), 32)))),
        1 => Value::Variant(1, Box::new(Value::Str(r.text(8)))),
        _ => Value::Variant(
            2,
            Box::new(Value::Struct(vec![
                Value::U64(r.below(32)),
                Value::I64(r.next() as i64),
            ])),
        ),
    };
    vec![
        Value::U64(r.below(8)),
        Value::I64(sext(r.next(), 13)),
        Value::U64(r.next()),
        Value::I64(sext(r.next(), 32)),
        Value::I64(sext(r.next(), 7)),
        Value::Float(f32::from_bits(r.next() as u32 & 0x7f7f_ffff) as f64),
        Value::Float(f64::from_bits(r.next() & 0x7fef_ffff_ffff_ffff)),
        Value::Str(r.text(10)),
        Value::Str(r.text(6)),
        Value::Array((0..3).map(|_| Value::U64(r.below(4096))).collect()),
        Value::U64(n),
        Value::Array(seq),
        Value::U64(tag),
        var,
        Value::Struct(vec![Value::U64(r.below(2)), Value::U64(r.below(1 << 48))]),
    ]
}

/// Writes a CTF 1.8 trace with the writer; returns its trace class.
fn write_trace(dir: &Path, bo: ByteOrder, header: EventHeaderKind, seed: u64) -> TraceClass {
    let tc = trace_class(bo, header);
    let opts = WriterOptions {
        packet_size: 4096,
        metadata: MetadataMode::Packetized,
        ..Default::default()
    };
    let mut w = TraceWriter::create(dir, &tc, 2, &opts).unwrap();
    let mut r = Rng(seed);
    let mut ts = 5u64;
    for _ in 0..400 {
        ts += match r.below(10) {
            0 => 1 << 27, // crosses the compact timestamp's range: extended header
            1 => 0,
            _ => r.below(100_000),
        };
        let cpu = r.below(2) as u32;
        if r.below(5) == 0 {
            w.write_event(cpu, 40, ts, &[Value::U64(r.below(65536))])
                .unwrap();
        } else {
            let p = payload_a_values(&mut r);
            let ctx = [Value::I64(sext(r.next(), 32))];
            w.write_event_with_context(cpu, 1, ts, &[], &ctx, &p)
                .unwrap();
        }
    }
    w.finish().unwrap();
    tc
}

// ---------------------------------------------------------------------------------------------
// CTF 2 metadata from the trace class

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn bo_json(bo: ByteOrder) -> &'static str {
    match bo {
        ByteOrder::Little => "little-endian",
        ByteOrder::Big => "big-endian",
    }
}

fn role_json(r: Role, scope: Scope) -> &'static str {
    match r {
        Role::PacketMagicNumber => "packet-magic-number",
        Role::MetadataStreamUuid => "metadata-stream-uuid",
        Role::DataStreamClassId => "data-stream-class-id",
        Role::DataStreamId => "data-stream-id",
        Role::PacketTotalLength => "packet-total-length",
        Role::PacketContentLength => "packet-content-length",
        Role::PacketBeginningDefaultClockTimestamp => "default-clock-timestamp",
        Role::PacketEndDefaultClockTimestamp => "packet-end-default-clock-timestamp",
        Role::DiscardedEventRecordCounterSnapshot => "discarded-event-record-counter-snapshot",
        Role::PacketSequenceNumber => "packet-sequence-number",
        Role::EventRecordClassId => "event-record-class-id",
        Role::DefaultClockTimestamp => {
            assert_ne!(scope, Scope::PacketContext);
            "default-clock-timestamp"
        }
    }
}

fn base_json(b: DisplayBase) -> u32 {
    match b {
        DisplayBase::Binary => 2,
        DisplayBase::Octal => 8,
        DisplayBase::Decimal => 10,
        DisplayBase::Hexadecimal => 16,
    }
}

fn mappings_json(ms: &[EnumMapping]) -> String {
    let items: Vec<String> = ms
        .iter()
        .map(|m| {
            let rs: Vec<String> = m
                .ranges
                .iter()
                .map(|r| format!("[{},{}]", r.lower, r.upper))
                .collect();
            format!("{}:[{}]", json_str(&m.label), rs.join(","))
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

fn int_json(i: &IntType, mappings: Option<&[EnumMapping]>, scope: Scope) -> String {
    let mut s = format!(
        r#"{{"type":"fixed-length-{}-integer","length":{},"byte-order":"{}","alignment":{},"preferred-display-base":{}"#,
        if i.signed { "signed" } else { "unsigned" },
        i.size,
        bo_json(i.byte_order),
        i.align,
        base_json(i.base)
    );
    if let Some(r) = i.role {
        let _ = write!(s, r#","roles":["{}"]"#, role_json(r, scope));
    }
    if let Some(m) = mappings {
        let _ = write!(s, r#","mappings":{}"#, mappings_json(m));
    }
    s.push('}');
    s
}

/// A relative field location for a field path designating a member of an enclosing structure.
fn location_json(fp: &FieldPath, tc_root: &StructType) -> String {
    // Names along the path (structure members only; variant options are traversed).
    let mut names = Vec::new();
    let mut t = FieldType::Struct(tc_root.clone());
    for &i in &fp.indices {
        loop {
            match t {
                FieldType::Array(a) => t = *a.elem,
                FieldType::Sequence(s) => t = *s.elem,
                _ => break,
            }
        }
        t = match t {
            FieldType::Struct(s) => {
                names.push(s.fields[i].name.clone());
                s.fields[i].ty.clone()
            }
            FieldType::Variant(v) => v.options[i].ty.clone(),
            other => panic!("bad path through {other:?}"),
        };
    }
    let origin = match fp.scope {
        Scope::PacketHeader => "packet-header",
        Scope::PacketContext => "packet-context",
        Scope::EventHeader => "event-record-header",
        Scope::EventCommonContext => "event-record-common-context",
        Scope::EventSpecificContext => "event-record-specific-context",
        Scope::EventPayload => "event-record-payload",
    };
    let names: Vec<String> = names.iter().map(|n| json_str(n)).collect();
    format!(r#"{{"origin":"{origin}","path":[{}]}}"#, names.join(","))
}

fn fc_json(t: &FieldType, scope: Scope, root: &StructType) -> String {
    match t {
        FieldType::Int(i) => int_json(i, None, scope),
        FieldType::Enum(e) => int_json(&e.int, Some(&e.mappings), scope),
        FieldType::Float(f) => format!(
            r#"{{"type":"fixed-length-floating-point-number","length":{},"byte-order":"{}","alignment":{}}}"#,
            f.size(),
            bo_json(f.byte_order),
            f.align
        ),
        FieldType::String(_) => r#"{"type":"null-terminated-string"}"#.to_string(),
        FieldType::Array(a) => match &*a.elem {
            FieldType::Int(i) if a.role == Some(Role::MetadataStreamUuid) => {
                assert_eq!(i.size, 8);
                format!(
                    r#"{{"type":"static-length-blob","length":{},"roles":["metadata-stream-uuid"]}}"#,
                    a.len
                )
            }
            FieldType::Int(i) if i.size == 8 && i.encoding == Encoding::Utf8 => {
                format!(r#"{{"type":"static-length-string","length":{}}}"#, a.len)
            }
            elem => format!(
                r#"{{"type":"static-length-array","length":{},"element-field-class":{}}}"#,
                a.len,
                fc_json(elem, scope, root)
            ),
        },
        FieldType::Sequence(s) => format!(
            r#"{{"type":"dynamic-length-array","length-field-location":{},"element-field-class":{}}}"#,
            location_json(&s.length, &root_for(s.length.scope, scope, root)),
            fc_json(&s.elem, scope, root)
        ),
        FieldType::Struct(s) => struct_json(s, scope, root),
        FieldType::Variant(v) => {
            let opts: Vec<String> = v
                .options
                .iter()
                .map(|o| {
                    let rs: Vec<String> = o
                        .ranges
                        .iter()
                        .map(|r| format!("[{},{}]", r.lower, r.upper))
                        .collect();
                    format!(
                        r#"{{"name":{},"field-class":{},"selector-field-ranges":[{}]}}"#,
                        json_str(&o.name),
                        fc_json(&o.ty, scope, root),
                        rs.join(",")
                    )
                })
                .collect();
            let tag_root = root_for(v.tag.scope, scope, root);
            format!(
                r#"{{"type":"variant","selector-field-location":{},"options":[{}]}}"#,
                location_json(&v.tag, &tag_root),
                opts.join(",")
            )
        }
        other => panic!("not used here: {other:?}"),
    }
}

thread_local! {
    static ROOTS: std::cell::RefCell<Vec<(Scope, StructType)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The root structure of scope `target` (the current one, or an earlier one registered).
fn root_for(target: Scope, current: Scope, root: &StructType) -> StructType {
    if target == current {
        return root.clone();
    }
    ROOTS.with(|r| {
        r.borrow()
            .iter()
            .find(|(s, _)| *s == target)
            .map(|(_, st)| st.clone())
            .expect("earlier scope registered")
    })
}

fn struct_json(s: &StructType, scope: Scope, root: &StructType) -> String {
    let ms: Vec<String> = s
        .fields
        .iter()
        .map(|f| {
            format!(
                r#"{{"name":{},"field-class":{}}}"#,
                json_str(&f.name),
                fc_json(&f.ty, scope, root)
            )
        })
        .collect();
    let mut out = format!(
        r#"{{"type":"structure","member-classes":[{}]"#,
        ms.join(",")
    );
    if s.min_align > 1 {
        let _ = write!(out, r#","minimum-alignment":{}"#, s.min_align);
    }
    out.push('}');
    out
}

fn scope_json(s: &StructType, scope: Scope) -> String {
    ROOTS.with(|r| r.borrow_mut().push((scope, s.clone())));
    struct_json(s, scope, s)
}

/// CTF 2 metadata (an RFC 7464 JSON text sequence) for a trace class.
fn ctf2_metadata(tc: &TraceClass) -> String {
    ROOTS.with(|r| r.borrow_mut().clear());
    let mut frags = Vec::new();
    let uuid: Vec<String> = tc.uuid.unwrap().iter().map(|b| b.to_string()).collect();
    frags.push(format!(
        r#"{{"type":"preamble","version":2,"uuid":[{}]}}"#,
        uuid.join(",")
    ));
    let env: Vec<String> = tc
        .env
        .iter()
        .map(|(k, v)| match v {
            ctf::ir::EnvValue::Int(i) => format!("{}:{i}", json_str(k)),
            ctf::ir::EnvValue::Str(s) => format!("{}:{}", json_str(k), json_str(s)),
        })
        .collect();
    frags.push(format!(
        r#"{{"type":"trace-class","environment":{{{}}},"packet-header-field-class":{}}}"#,
        env.join(","),
        scope_json(tc.packet_header.as_ref().unwrap(), Scope::PacketHeader)
    ));
    for c in &tc.clocks {
        frags.push(format!(
            r#"{{"type":"clock-class","id":{},"frequency":{},"offset-from-origin":{{"seconds":{},"cycles":{}}},"precision":{}}}"#,
            json_str(&c.name),
            c.freq,
            c.offset_s,
            c.offset_cycles,
            c.precision
        ));
    }
    for sc in tc.streams.values() {
        let clock = &tc.clocks[sc.default_clock.unwrap()].name;
        frags.push(format!(
            r#"{{"type":"data-stream-class","id":{},"default-clock-class-id":{},"packet-context-field-class":{},"event-record-header-field-class":{}}}"#,
            sc.id,
            json_str(clock),
            scope_json(sc.packet_context.as_ref().unwrap(), Scope::PacketContext),
            scope_json(sc.event_header.as_ref().unwrap(), Scope::EventHeader),
        ));
        for ec in sc.events.values() {
            let mut f = format!(
                r#"{{"type":"event-record-class","id":{},"data-stream-class-id":{},"name":{}"#,
                ec.id,
                sc.id,
                json_str(&ec.name)
            );
            if let Some(c) = &ec.context {
                let _ = write!(
                    f,
                    r#","specific-context-field-class":{}"#,
                    scope_json(c, Scope::EventSpecificContext)
                );
            }
            if let Some(p) = &ec.payload {
                let _ = write!(
                    f,
                    r#","payload-field-class":{}"#,
                    scope_json(p, Scope::EventPayload)
                );
            }
            f.push('}');
            frags.push(f);
        }
    }
    frags.iter().map(|f| format!("\u{1e}{f}\n")).collect()
}

// ---------------------------------------------------------------------------------------------
// Reading

#[derive(Debug, PartialEq)]
struct Decoded {
    name: String,
    class_id: u64,
    cycles: u64,
    time_ns: Option<i64>,
    packet_context: Option<Value>,
    context: Option<Value>,
    payload: Option<Value>,
}

fn decode_all(dir: &Path) -> Vec<Decoded> {
    let traces = ctf::open_all(&[dir]).unwrap();
    assert_eq!(traces.len(), 1);
    assert!(traces[0].errors.is_empty(), "{:?}", traces[0].errors);
    let mut m = ctf::Merger::new(&traces);
    let mut out = Vec::new();
    while let Some(msg) = m.next() {
        assert_eq!(msg, &ctf::Message::Event);
        let ev = m.event().unwrap();
        out.push(Decoded {
            name: ev.name().to_string(),
            class_id: ev.class_id(),
            cycles: ev.cycles(),
            time_ns: ev.time_ns(),
            packet_context: ev.packet_context().map(|v| v.to_value()),
            context: ev.specific_context().map(|v| v.to_value()),
            payload: ev.payload().map(|v| v.to_value()),
        });
    }
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    out
}

/// Writes a CTF 1.8 trace, then a CTF 2 copy (same stream files, JSON metadata).
fn both(bo: ByteOrder, header: EventHeaderKind, seed: u64) -> (tempfile::TempDir, TraceClass) {
    let tmp = tempfile::tempdir().unwrap();
    let v1 = tmp.path().join("ctf1");
    let tc = write_trace(&v1, bo, header, seed);
    let v2 = tmp.path().join("ctf2");
    copy_data(&v1, &v2);
    std::fs::write(v2.join("metadata"), ctf2_metadata(&tc)).unwrap();
    (tmp, tc)
}

/// Copies everything of trace `from` but its metadata, the `index/` directory included.
fn copy_data(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_data(&e.path(), &to.join(e.file_name()));
        } else if e.file_name() != "metadata" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn check(bo: ByteOrder, header: EventHeaderKind, seed: u64) {
    let (tmp, tc) = both(bo, header, seed);
    let a = decode_all(&tmp.path().join("ctf1"));
    let b = decode_all(&tmp.path().join("ctf2"));
    assert_eq!(a.len(), 400);
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "event {i}");
    }
    // Both front ends see the same environment and clock.
    let t2 = ctf::open_all(&[tmp.path().join("ctf2")]).unwrap();
    assert_eq!(t2[0].class.version, (2, 0));
    assert_eq!(t2[0].class.env, tc.env);
    assert_eq!(t2[0].class.clocks[0].freq, tc.clocks[0].freq);
    assert_eq!(t2[0].class.clocks[0].offset_s, tc.clocks[0].offset_s);
}

#[test]
fn little_endian_compact_headers() {
    check(ByteOrder::Little, EventHeaderKind::Compact, 1);
}

#[test]
fn big_endian_compact_headers() {
    check(ByteOrder::Big, EventHeaderKind::Compact, 2);
}

#[test]
fn little_endian_large_headers() {
    check(ByteOrder::Little, EventHeaderKind::Large, 3);
}

#[test]
fn big_endian_large_headers() {
    check(ByteOrder::Big, EventHeaderKind::Large, 4);
}

/// The CTF 2 metadata built here resolves to the same event classes as the TSDL, apart from
/// what CTF 2 spells differently (text arrays are static-length strings, the UUID a BLOB).
#[test]
fn ctf2_metadata_resolves_to_the_same_payloads() {
    let tc = trace_class(ByteOrder::Little, EventHeaderKind::Compact);
    let t2 = ctf::ctf2::parse(&ctf2_metadata(&tc)).unwrap();
    let (s1, s2) = (&tc.streams[&0], &t2.streams[&0]);
    assert_eq!(
        s1.events.keys().collect::<Vec<_>>(),
        s2.events.keys().collect::<Vec<_>>()
    );
    for (id, e1) in &s1.events {
        let e2 = &s2.events[id];
        assert_eq!(e1.name, e2.name);
        assert_eq!(e1.context, e2.context, "context of {}", e1.name);
        let (p1, p2) = (e1.payload.as_ref().unwrap(), e2.payload.as_ref().unwrap());
        assert_eq!(p1.fields.len(), p2.fields.len());
        for (f1, f2) in p1.fields.iter().zip(&p2.fields) {
            if f1.name == "comm" {
                assert!(matches!(f2.ty, FieldType::SizedString(_)), "{:?}", f2.ty);
            } else {
                assert_eq!(f1, f2, "member {}", f1.name);
            }
        }
    }
    assert_eq!(s1.event_header, s2.event_header);
    assert_eq!(s1.packet_context, s2.packet_context);
}
