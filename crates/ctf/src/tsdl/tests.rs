use super::parse;
use crate::ir::*;

const HEADER: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;
"#;

/// An LTTng-like trace; the trace block (and its byte order) comes after the aliases.
fn lttng_like() -> String {
    format!(
        r#"{HEADER}
trace {{
	major = 1;
	minor = 8;
	uuid = "69861fba-fe44-2b41-b75b-39acaf6930ec";
	byte_order = be;
	packet.header := struct {{
		uint32_t magic;
		uint8_t  uuid[16];
		uint32_t stream_id;
		unsigned long stream_instance_id;
	}};
}};

env {{
	hostname = "host";
	tracer_major = 2;
	neg = -3;
}};

clock {{
	name = "monotonic";
	uuid = "e0ff1bac-aa1d-451d-a8c1-10cb8d315d45";
	description = "Monotonic Clock";
	freq = 1000000000;
	precision = 5;
	offset_s = 10;
	offset = 1457111225177515989;
	absolute = TRUE;
}};

typealias integer {{ size = 27; align = 1; signed = false; map = clock.monotonic.value; }} := uint27_clock_monotonic_t;
typealias integer {{ size = 64; align = 8; signed = false; map = clock.monotonic.value; }} := uint64_clock_monotonic_t;

struct packet_context {{
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	unsigned long content_size;
	unsigned long packet_size;
	unsigned long packet_seq_num;
	unsigned long events_discarded;
	uint32_t cpu_id;
}};

struct event_header_compact {{
	enum : uint5_t {{ compact = 0 ... 30, extended = 31 }} id;
	variant <id> {{
		struct {{
			uint27_clock_monotonic_t timestamp;
		}} compact;
		struct {{
			uint32_t id;
			uint64_clock_monotonic_t timestamp;
		}} extended;
	}} v;
}} align(8);

stream {{
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct packet_context;
	event.context := struct {{ integer {{ size = 32; }} _vtid; }};
}};

event {{
	name = "sched_switch";
	id = 1180;
	stream_id = 0;
	loglevel = 4;
	model.emf.uri = "http://example.com";
	fields := struct {{
		integer {{ size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; }} _prev_comm[16];
		integer {{ size = 32; align = 8; signed = 1; encoding = none; base = 16; }} _prev_tid;
		unsigned long __fds_length;
		integer {{ size = 32; byte_order = le; }} _fds[ __fds_length ];
		string _name;
		floating_point {{ exp_dig = 11; mant_dig = 53; align = 8; }} _d;
	}};
}};
"#
    )
}

fn int(t: &FieldType) -> &IntType {
    match t {
        FieldType::Int(i) => i,
        FieldType::Enum(e) => &e.int,
        other => panic!("not an integer: {other:?}"),
    }
}

fn field<'a>(s: &'a StructType, name: &str) -> &'a FieldType {
    &s.field(name)
        .unwrap_or_else(|| panic!("no field {name} in {s:?}"))
        .ty
}

#[test]
fn lttng_like_trace() {
    let tc = parse(&lttng_like()).unwrap();
    assert_eq!(tc.version, (1, 8));
    assert_eq!(tc.byte_order, ByteOrder::Big);
    assert_eq!(tc.uuid.unwrap()[..4], [0x69, 0x86, 0x1f, 0xba]);
    assert_eq!(tc.env_str("hostname"), Some("host"));
    assert_eq!(tc.env("tracer_major"), Some(&EnvValue::Int(2)));
    assert_eq!(tc.env("neg"), Some(&EnvValue::Int(-3)));

    let c = &tc.clocks[0];
    assert_eq!(c.name, "monotonic");
    assert_eq!(
        (c.freq, c.precision, c.offset_s, c.offset_cycles),
        (1_000_000_000, 5, 10, 1457111225177515989)
    );
    assert!(c.absolute);
    assert_eq!(c.description.as_deref(), Some("Monotonic Clock"));
    assert_eq!(c.uuid.unwrap()[0], 0xe0);

    let ph = tc.packet_header.as_ref().unwrap();
    assert_eq!(int(field(ph, "magic")).role, Some(Role::PacketMagicNumber));
    assert_eq!(
        int(field(ph, "magic")).byte_order,
        ByteOrder::Big,
        "native resolved late"
    );
    assert_eq!(
        int(field(ph, "stream_id")).role,
        Some(Role::DataStreamClassId)
    );
    assert_eq!(
        int(field(ph, "stream_instance_id")).role,
        Some(Role::DataStreamId)
    );
    let FieldType::Array(u) = field(ph, "uuid") else {
        panic!()
    };
    assert_eq!(
        (u.len, u.role, u.min_align),
        (16, Some(Role::MetadataStreamUuid), 1)
    );

    let sc = &tc.streams[&0];
    assert_eq!(sc.default_clock, Some(0));
    let pc = sc.packet_context.as_ref().unwrap();
    let roles: Vec<_> = pc.fields.iter().map(|f| int(&f.ty).role).collect();
    assert_eq!(
        roles,
        vec![
            Some(Role::PacketBeginningDefaultClockTimestamp),
            Some(Role::PacketEndDefaultClockTimestamp),
            Some(Role::PacketContentLength),
            Some(Role::PacketTotalLength),
            Some(Role::PacketSequenceNumber),
            Some(Role::DiscardedEventRecordCounterSnapshot),
            None,
        ]
    );
    assert_eq!(
        int(field(pc, "timestamp_begin")).mapped_clock.as_deref(),
        Some("monotonic")
    );

    let eh = sc.event_header.as_ref().unwrap();
    assert_eq!(eh.min_align, 8);
    let FieldType::Enum(id) = field(eh, "id") else {
        panic!()
    };
    assert_eq!(id.int.role, Some(Role::EventRecordClassId));
    assert_eq!((id.int.size, id.int.align), (5, 1));
    assert_eq!(
        id.mappings[0].ranges,
        vec![IntRange {
            lower: 0,
            upper: 30
        }]
    );
    let FieldType::Variant(v) = field(eh, "v") else {
        panic!()
    };
    assert_eq!(
        v.tag,
        FieldPath {
            scope: Scope::EventHeader,
            indices: vec![0]
        }
    );
    assert_eq!(
        v.options[0].ranges,
        vec![IntRange {
            lower: 0,
            upper: 30
        }]
    );
    assert_eq!(
        v.options[1].ranges,
        vec![IntRange {
            lower: 31,
            upper: 31
        }]
    );
    let FieldType::Struct(ext) = &v.options[1].ty else {
        panic!()
    };
    assert_eq!(int(field(ext, "id")).role, Some(Role::EventRecordClassId));
    assert_eq!(
        int(field(ext, "timestamp")).role,
        Some(Role::DefaultClockTimestamp)
    );
    let FieldType::Struct(cmp) = &v.options[0].ty else {
        panic!()
    };
    assert_eq!(int(field(cmp, "timestamp")).size, 27);

    let ecc = sc.event_common_context.as_ref().unwrap();
    assert_eq!(ecc.fields[0].name, "vtid");

    let ev = &sc.events[&1180];
    assert_eq!(ev.name, "sched_switch");
    assert_eq!(ev.loglevel, Some(4));
    assert_eq!(ev.model_emf_uri.as_deref(), Some("http://example.com"));
    let p = ev.payload.as_ref().unwrap();
    let names: Vec<_> = p.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["prev_comm", "prev_tid", "_fds_length", "fds", "name", "d"]
    );
    let FieldType::Array(a) = field(p, "prev_comm") else {
        panic!()
    };
    assert_eq!(int(&a.elem).encoding, Encoding::Utf8);
    let tid = int(field(p, "prev_tid"));
    assert!(tid.signed);
    assert_eq!(tid.base, DisplayBase::Hexadecimal);
    let FieldType::Sequence(s) = field(p, "fds") else {
        panic!()
    };
    assert_eq!(
        s.length,
        FieldPath {
            scope: Scope::EventPayload,
            indices: vec![2]
        }
    );
    assert_eq!(int(&s.elem).byte_order, ByteOrder::Little);
    let FieldType::Float(f) = field(p, "d") else {
        panic!()
    };
    assert_eq!((f.size(), f.align, f.byte_order), (64, 8, ByteOrder::Big));
    assert!(matches!(field(p, "name"), FieldType::String(_)));
}

#[test]
fn lttng_clocks_are_absolute_by_default() {
    let text = "env { tracer_name = \"lttng-ust\"; };
        clock { name = monotonic; };
        clock { name = other; absolute = false; };";
    let tc = parse(text).unwrap();
    assert!(tc.clocks[0].absolute);
    assert!(!tc.clocks[1].absolute);
    let tc = parse("env { tracer_name = \"barectf\"; }; clock { name = monotonic; };").unwrap();
    assert!(!tc.clocks[0].absolute);
}

#[test]
fn crlf_and_line_comments() {
    let text = lttng_like().replace('\n', "\r\n") + "// trailing comment";
    let a = parse(&text).unwrap();
    let b = parse(&lttng_like()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn minimal_trace_defaults() {
    let tc = parse("/* CTF 1.8 */ trace { major = 1; minor = 8; }; event { name = ev; fields := struct { string s; }; };").unwrap();
    assert_eq!(tc.byte_order, ByteOrder::Little);
    assert_eq!(tc.streams.len(), 1);
    let sc = &tc.streams[&0];
    assert_eq!(sc.events[&0].name, "ev");
    assert!(tc.clocks.is_empty());
    assert_eq!(sc.default_clock, None);
}

#[test]
fn default_clock_created_or_single_clock_used() {
    let base = "trace { major = 1; minor = 8; byte_order = le; };
        stream { event.header := struct { integer { size = 32; } id; integer { size = 64; } timestamp; }; };";
    let tc = parse(base).unwrap();
    assert_eq!(tc.clocks.len(), 1);
    assert_eq!(tc.clocks[0].name, "default");
    assert_eq!(tc.clocks[0].freq, 1_000_000_000);
    let sc = &tc.streams[&0];
    assert_eq!(sc.default_clock, Some(0));
    let eh = sc.event_header.as_ref().unwrap();
    assert_eq!(
        int(field(eh, "timestamp")).mapped_clock.as_deref(),
        Some("default")
    );
    assert_eq!(
        int(field(eh, "timestamp")).role,
        Some(Role::DefaultClockTimestamp)
    );
    assert_eq!(int(field(eh, "id")).role, Some(Role::EventRecordClassId));

    let tc = parse(&format!("clock {{ name = c1; freq = 1000; }}; {base}")).unwrap();
    assert_eq!(tc.clocks.len(), 1);
    let eh = tc.streams[&0].event_header.clone().unwrap();
    assert_eq!(
        int(field(&eh, "timestamp")).mapped_clock.as_deref(),
        Some("c1")
    );
    assert_eq!(tc.clocks[0].freq, 1000);
    assert!(!tc.clocks[0].absolute);
}

#[test]
fn trace_block_last_and_native_order() {
    let text = "typealias integer { size = 16; } := u16;
        typealias integer { size = 16; byte_order = native; } := n16;
        typealias floating_point { exp_dig = 8; mant_dig = 24; } := float;
        event { name = \"e\"; fields := struct { u16 a; n16 b; float f; }; };
        stream { id = 0; };
        trace { major = 1; minor = 8; byte_order = network; };";
    let tc = parse(text).unwrap();
    assert_eq!(tc.byte_order, ByteOrder::Big);
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    assert_eq!(int(field(&p, "a")).byte_order, ByteOrder::Big);
    assert_eq!(int(field(&p, "b")).byte_order, ByteOrder::Big);
    assert_eq!(int(field(&p, "a")).align, 8);
    let FieldType::Float(f) = field(&p, "f") else {
        panic!()
    };
    assert_eq!((f.byte_order, f.align), (ByteOrder::Big, 8));
}

#[test]
fn integer_attribute_spellings() {
    let text = "trace { byte_order = le; };
        event { fields := struct {
            integer { size = 3; signed = true; base = x; } a;
            integer { size = 8; signed = false; base = o; byte_order = big; } b;
            integer { size = 8; base = binary; byte_order = network; encoding = ASCII; } c;
            integer { size = 0x10; align = 0x20; base = p; } d;
            integer { size = 010; signed = 1; base = 2; } e;
            string { encoding = ASCII; } s;
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let a = int(field(&p, "a"));
    assert_eq!(
        (a.size, a.align, a.signed, a.base),
        (3, 1, true, DisplayBase::Hexadecimal)
    );
    let b = int(field(&p, "b"));
    assert_eq!((b.base, b.byte_order), (DisplayBase::Octal, ByteOrder::Big));
    let c = int(field(&p, "c"));
    assert_eq!(
        (c.base, c.byte_order, c.encoding),
        (DisplayBase::Binary, ByteOrder::Big, Encoding::Utf8)
    );
    let d = int(field(&p, "d"));
    assert_eq!(
        (d.size, d.align, d.base),
        (16, 32, DisplayBase::Hexadecimal)
    );
    let e = int(field(&p, "e"));
    assert_eq!((e.size, e.signed, e.base), (8, true, DisplayBase::Binary));
}

#[test]
fn enums_auto_increment_and_containers() {
    let text = "typealias integer { size = 32; signed = true; } := int;
        enum color { RED, GREEN = 5, BLUE, \"quoted label\" = 10 ... 20, NEG = -4, AFTER };
        event { fields := struct {
            enum color c;
            enum : integer { size = 8; } { A, B } d;
            enum named2 : int { X = 1 } e;
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let FieldType::Enum(c) = field(&p, "c") else {
        panic!()
    };
    let got: Vec<(String, i128, i128)> = c
        .mappings
        .iter()
        .map(|m| (m.label.clone(), m.ranges[0].lower, m.ranges[0].upper))
        .collect();
    let expect: Vec<(String, i128, i128)> = [
        ("RED", 0, 0),
        ("GREEN", 5, 5),
        ("BLUE", 6, 6),
        ("quoted label", 10, 20),
        ("NEG", -4, -4),
        ("AFTER", -3, -3),
    ]
    .iter()
    .map(|(l, a, b)| (l.to_string(), *a, *b))
    .collect();
    assert_eq!(got, expect);
    assert!(c.int.signed);
    let FieldType::Enum(d) = field(&p, "d") else {
        panic!()
    };
    assert_eq!(d.int.size, 8);
    // No container and no `int` declared: error.
    let err = parse("\nenum e { A };").unwrap_err();
    assert_eq!(err.line, Some(2));
}

#[test]
fn arrays_sequences_and_paths() {
    let text = "typealias integer { size = 8; } := u8;
        trace { byte_order = le; packet.header := struct { u8 hlen; u8 magic; }; };
        stream {
            packet.context := struct { u8 plen; u8 pseq[plen]; };
            event.header := struct { u8 id; u8 ehlen; };
            event.context := struct { u8 clen; };
        };
        event {
            context := struct { u8 slen; u8 s[clen]; };
            fields := struct {
                u8 m[2][3];
                u8 _len;
                struct { u8 inner_len; u8 a[inner_len]; u8 b[_len]; u8 c[len]; } st;
                u8 rel_event_ctx[slen];
                u8 rel_common[clen];
                u8 rel_header[ehlen];
                u8 rel_pc[plen];
                u8 rel_ph[hlen];
                u8 abs1[trace.packet.header.hlen];
                u8 abs2[stream.packet.context.plen];
                u8 abs3[stream.event.header.ehlen];
                u8 abs4[stream.event.context.clen];
                u8 abs5[event.context.slen];
                u8 abs6[event.fields.st.inner_len];
            };
        };";
    let tc = parse(text).unwrap();
    let ev = &tc.streams[&0].events[&0];
    let p = ev.payload.as_ref().unwrap();
    let FieldType::Array(m) = field(p, "m") else {
        panic!()
    };
    assert_eq!(m.len, 2);
    let FieldType::Array(m2) = &*m.elem else {
        panic!()
    };
    assert_eq!(m2.len, 3);
    let seq = |t: &FieldType| match t {
        FieldType::Sequence(s) => s.length.clone(),
        other => panic!("not a sequence: {other:?}"),
    };
    let fp = |scope, indices: &[usize]| FieldPath {
        scope,
        indices: indices.to_vec(),
    };
    let FieldType::Struct(st) = field(p, "st") else {
        panic!()
    };
    assert_eq!(seq(field(st, "a")), fp(Scope::EventPayload, &[2, 0]));
    assert_eq!(seq(field(st, "b")), fp(Scope::EventPayload, &[1]));
    assert_eq!(seq(field(st, "c")), fp(Scope::EventPayload, &[1]));
    assert_eq!(
        seq(field(p, "rel_event_ctx")),
        fp(Scope::EventSpecificContext, &[0])
    );
    assert_eq!(
        seq(field(p, "rel_common")),
        fp(Scope::EventCommonContext, &[0])
    );
    assert_eq!(seq(field(p, "rel_header")), fp(Scope::EventHeader, &[1]));
    assert_eq!(seq(field(p, "rel_pc")), fp(Scope::PacketContext, &[0]));
    assert_eq!(seq(field(p, "rel_ph")), fp(Scope::PacketHeader, &[0]));
    assert_eq!(seq(field(p, "abs1")), fp(Scope::PacketHeader, &[0]));
    assert_eq!(seq(field(p, "abs2")), fp(Scope::PacketContext, &[0]));
    assert_eq!(seq(field(p, "abs3")), fp(Scope::EventHeader, &[1]));
    assert_eq!(seq(field(p, "abs4")), fp(Scope::EventCommonContext, &[0]));
    assert_eq!(seq(field(p, "abs5")), fp(Scope::EventSpecificContext, &[0]));
    assert_eq!(seq(field(p, "abs6")), fp(Scope::EventPayload, &[2, 0]));
    let ctx = ev.context.as_ref().unwrap();
    assert_eq!(seq(field(ctx, "s")), fp(Scope::EventCommonContext, &[0]));
    let pc = tc.streams[&0].packet_context.as_ref().unwrap();
    assert_eq!(seq(field(pc, "pseq")), fp(Scope::PacketContext, &[0]));
}

#[test]
fn unknown_length_is_an_error_with_line() {
    let text = "typealias integer { size = 8; } := u8;\nevent {\n fields := struct {\n u8 a[nope];\n };\n};";
    let e = parse(text).unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("nope"));
}

#[test]
fn untagged_variant_declared_then_used_with_tag() {
    let text = "typealias integer { size = 8; } := u8;
        variant vname { u8 _a; string b; struct { u8 x; } __c; };
        typedef enum : u8 { a, b, _c } sel_t;
        event { fields := struct {
            sel_t _sel;
            variant vname <_sel> v;
            variant vname <sel> w;
            struct { variant vname <event.fields.sel> in; } nest;
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    for name in ["v", "w"] {
        let FieldType::Variant(v) = field(&p, name) else {
            panic!()
        };
        assert_eq!(
            v.tag,
            FieldPath {
                scope: Scope::EventPayload,
                indices: vec![0]
            }
        );
        let names: Vec<_> = v.options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "_c"]);
        assert_eq!(v.select(0), Some(0));
        assert_eq!(v.select(1), Some(1));
        assert_eq!(v.select(2), Some(2));
    }
    let FieldType::Struct(n) = field(&p, "nest") else {
        panic!()
    };
    let FieldType::Variant(v) = field(n, "in") else {
        panic!()
    };
    assert_eq!(v.tag.indices, vec![0]);
}

#[test]
fn variant_tag_must_be_enum_and_variant_needs_tag() {
    let e = parse("typealias integer { size = 8; } := u8;\nevent { fields := struct { u8 t;\n variant <t> { u8 a; } v; }; };")
        .unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    let e = parse("typealias integer { size = 8; } := u8;\nevent { fields := struct {\n variant { u8 a; } v; }; };").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
}

#[test]
fn variant_option_matching_underscore_rules() {
    // Option `_VOISINE` vs label `_VOISINE`; option `PELCHAT` vs label `_PELCHAT`.
    let text = "event { fields := struct {
            enum : integer { size = 8; } { COSSETTE, _PELCHAT, _VOISINE, __X } tag;
            variant <tag> { string COSSETTE; string PELCHAT; string _VOISINE; string _X; } var;
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let FieldType::Variant(v) = field(&p, "var") else {
        panic!()
    };
    let names: Vec<_> = v.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["COSSETTE", "PELCHAT", "VOISINE", "X"]);
    for k in 0..4 {
        assert_eq!(v.select(k as i128), Some(k));
    }
    let FieldType::Enum(e) = field(&p, "tag") else {
        panic!()
    };
    assert_eq!(e.mappings[2].label, "_VOISINE", "labels are kept verbatim");
}

#[test]
fn struct_names_alignment_and_typedef() {
    let text = "typedef integer { size = 8; } byte_t;
        struct s { byte_t a; } align(64);
        typedef struct s s_t;
        event { fields := struct { struct s x; s_t y; byte_t z[4]; struct { byte_t q; } align(16) w; } align(32); };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    assert_eq!(p.min_align, 32);
    let FieldType::Struct(x) = field(&p, "x") else {
        panic!()
    };
    assert_eq!(x.min_align, 64);
    let FieldType::Struct(y) = field(&p, "y") else {
        panic!()
    };
    assert_eq!(y.min_align, 64);
    let FieldType::Struct(w) = field(&p, "w") else {
        panic!()
    };
    assert_eq!(w.min_align, 16);
}

#[test]
fn lenient_unknown_attributes_and_literals() {
    let text = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; aa = bb; } := uint8_t;
trace {
	major = 1; minor = 8;
	test = 0xABC234; test1 = 06534; test3 = +1234; test4 = -1234; t5 = 12ul;
	s1 = "\""; s2 = "?\x20\040?"; c = '\n';
	byte_order = le;
	blah = "aaa";
};
stream { askdjfhaskdjfh = 1; };
event { name = string; fields := struct { string str; }; asdjfhah := struct { uint8_t ffff; }; };
callsite { name = "x"; func = "f"; ip = 0x1234; file = "a.c"; line = 12; };
"#;
    let tc = parse(text).unwrap();
    assert_eq!(tc.streams[&0].events[&0].name, "string");
}

#[test]
fn stream_and_event_ids() {
    let text = "stream { id = 3; }; stream { id = 7; };
        event { name = a; stream_id = 3; id = 1; };
        event { name = b; stream_id = 7; };
        event { name = c; stream_id = 7; id = 2; };";
    let tc = parse(text).unwrap();
    assert_eq!(tc.streams.keys().copied().collect::<Vec<_>>(), [3, 7]);
    assert_eq!(tc.streams[&3].events[&1].name, "a");
    assert_eq!(tc.streams[&7].events[&0].name, "b");
    assert_eq!(tc.streams[&7].events[&2].name, "c");
    // Several streams: stream_id is mandatory.
    let e = parse("stream { id = 1; };\nstream { id = 2; };\nevent { name = x; };").unwrap_err();
    assert_eq!(e.line, Some(3));
    // Duplicate event id.
    let e = parse("event { name = x; };\n\nevent { name = y; };").unwrap_err();
    assert_eq!(e.line, Some(3));
}

#[test]
fn syntax_errors_report_lines() {
    let cases: &[(&str, usize)] = &[
        ("trace {\n major = 1\n minor = 8; };", 3),
        ("/* CTF 1.8 */\n\ntrace { byte_order = sideways; };", 3),
        ("event {\n fields := struct {\n unknown_t x;\n };\n};", 3),
        ("event {\n fields := struct {\n integer { size = 65; } x;\n };\n};", 3),
        ("event {\n fields := struct {\n integer { align = 8; } x;\n };\n};", 3),
        ("\n\n@", 3),
        ("trace {\n uuid = \"not-a-uuid\";\n};", 2),
        ("event {\n name = \"x\";\n", 2),
        ("clock { name = c; };\nevent { fields := struct {\n integer { size = 8; map = clock.d.value; } t; }; };", 3),
        ("event { fields := integer { size = 8; };\n};", 1),
        ("event { fields := struct { string a;\n string a; }; };", 2),
        ("/* unterminated\n comment", 1),
        ("trace { major = 2; };", 1),
    ];
    for (text, line) in cases {
        let e = parse(text).expect_err(text);
        assert_eq!(e.line, Some(*line), "{text:?}: {e}");
    }
}

/// Integer attribute lists read again (the lexer copies their tokens, the parser reuses the
/// integer) keep their own lines, and a copy's failure is reported where it is.
#[test]
fn repeated_integer_lists_keep_their_lines() {
    let list = "integer { size = 8; /* a\n b */ align = 8;\n map = clock.d.value; }";
    // The alias is never used: the only unknown-clock error is the field's, on line 8.
    let text =
        format!("clock {{ name = c; }};\ntypealias {list} := unused_t;\nevent {{ fields := struct {{\n{list} t; }}; }};");
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(8), "{e}");
    assert!(e.message.contains("unknown clock `d`"), "{e}");
    // A copied list followed by a syntax error: the lines after the copy count its newlines.
    let text = format!(
        "clock {{ name = d; }};\ntypealias {list} := a_t;\nevent {{ fields := struct {{\n{list} t;\n@ }}; }};"
    );
    assert_eq!(parse(&text).unwrap_err().line, Some(9));
    // The same list where an integer cannot be: the copy is parsed as what it is.
    let text = format!("typealias {list} := int;\nenum {list};");
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("found `;`"), "{e}");
    // Repeated lists give equal integers, each with its own map line.
    let ok = format!(
        "clock {{ name = d; }};\nevent {{ fields := struct {{\n{list} a;\n{list} b; }}; }};"
    );
    let class = parse(&ok).unwrap();
    let payload = class.streams[&0].events[&0].payload.as_ref().unwrap();
    assert_eq!(payload.fields[0].ty, payload.fields[1].ty);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut text = String::from("event { fields := ");
    for _ in 0..5000 {
        text.push_str("struct { ");
    }
    let e = parse(&text).unwrap_err();
    assert!(e.message.contains("deep"), "{e}");
    // Alias chains cannot nest types beyond the limit either.
    let mut text = String::from("typealias struct { string s; } := t0;\n");
    for i in 1..200 {
        text.push_str(&format!("typealias struct {{ t{} a; }} := t{i};\n", i - 1));
    }
    assert!(parse(&text).is_err());
}

#[test]
fn exponential_alias_expansion_is_bounded() {
    let mut text = String::from("typealias integer { size = 8; } := t0;\n");
    for i in 1..40 {
        let p = i - 1;
        text.push_str(&format!(
            "typealias struct {{ t{p} a; t{p} b; t{p} c; t{p} d; }} := t{i};\n"
        ));
    }
    let e = parse(&text).unwrap_err();
    assert!(e.message.contains("large"), "{e}");
}

#[test]
fn many_declarators_of_a_big_type_are_bounded() {
    let mut text = String::from("typealias integer { size = 8; } := t0;\n");
    for i in 1..6 {
        let p = i - 1;
        text.push_str(&format!("typealias struct {{ t{p} a; t{p} b; t{p} c; t{p} d; t{p} e; t{p} f; t{p} g; t{p} h; }} := t{i};\n"));
    }
    text.push_str("event { fields := struct { t5 a0");
    for i in 1..2000 {
        text.push_str(&format!(", a{i}"));
    }
    text.push_str("; }; };");
    let e = parse(&text).unwrap_err();
    assert!(e.message.contains("large"), "{e}");
}

#[test]
fn named_tagged_variant_reused_without_tag() {
    let text = "event { fields := struct {
            enum : integer { size = 8; } { A, B } sel;
            variant v <sel> { string A; integer { size = 8; } B; } x;
            variant v y;
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let FieldType::Variant(y) = field(&p, "y") else {
        panic!()
    };
    assert_eq!(y.tag.indices, vec![0]);
    assert_eq!(y.select(1), Some(1));
}

#[test]
fn huge_array_lengths_do_not_allocate() {
    let tc = parse("event { fields := struct { string a[18446744073709551615]; }; };").unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let FieldType::Array(a) = field(&p, "a") else {
        panic!()
    };
    assert_eq!(a.len, u64::MAX);
    assert!(parse("event { fields := struct { string a[18446744073709551616]; }; };").is_err());
}

/// Small deterministic PRNG (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn random_mutations_never_panic() {
    let base = lttng_like();
    let pieces = [
        "{",
        "}",
        ";",
        "[",
        "]",
        "<",
        ">",
        ":=",
        "=",
        "...",
        ".",
        ",",
        "struct",
        "variant",
        "enum",
        "integer",
        "typealias",
        "typedef",
        "string",
        "0",
        "-1",
        "0xffffffffffffffff",
        "\"",
        "'",
        "/*",
        "*/",
        "//",
        "\n",
        "id",
        "_id",
        "timestamp",
        "v",
        "align(8)",
        "[16]",
        "[id]",
        "event.fields.",
        "trace",
        "stream",
        "event",
        "native",
        "clock.monotonic.value",
        "floating_point",
        "size = 64;",
        "\u{e9}",
        "\\",
    ];
    // `TSDL_FUZZ_ITERS` and `TSDL_FUZZ_SEED` allow longer local runs.
    let iters: usize = std::env::var("TSDL_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("TSDL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng(seed | 1);
    for _ in 0..iters {
        let mut s: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(s.len() + 1).min(s.len());
            match rng.below(4) {
                0 => {
                    let len = rng.below(40).min(s.len() - at);
                    s.drain(at..at + len);
                }
                1 => {
                    let p = pieces[rng.below(pieces.len())];
                    for (k, c) in p.chars().enumerate() {
                        s.insert(at + k, c);
                    }
                }
                2 => {
                    if at < s.len() {
                        s[at] = char::from(b' ' + rng.below(95) as u8);
                    }
                }
                _ => {
                    // Duplicate a chunk.
                    let len = rng.below(200).min(s.len() - at);
                    let chunk: Vec<char> = s[at..at + len].to_vec();
                    let to = rng.below(s.len() + 1).min(s.len());
                    for (k, c) in chunk.into_iter().enumerate() {
                        s.insert(to + k, c);
                    }
                }
            }
        }
        let text: String = s.into_iter().collect();
        let _ = parse(&text);
    }
}

#[test]
fn paths_through_variants_and_arrays() {
    let text = "typealias integer { size = 8; } := u8;
        event { fields := struct {
            enum : u8 { a, b } sel;
            variant <sel> {
                struct { u8 n; u8 data[n]; } a;
                u8 b;
            } v;
            struct { enum : u8 { x, y } k; variant <k> { u8 x; string y; } w; } arr[4];
            u8 tail[v.a.n];
        }; };";
    let tc = parse(text).unwrap();
    let p = tc.streams[&0].events[&0].payload.clone().unwrap();
    let FieldType::Variant(v) = field(&p, "v") else {
        panic!()
    };
    let FieldType::Struct(a) = &v.options[0].ty else {
        panic!()
    };
    let FieldType::Sequence(d) = field(a, "data") else {
        panic!()
    };
    assert_eq!(d.length.indices, vec![1, 0, 0]);
    let FieldType::Array(arr) = field(&p, "arr") else {
        panic!()
    };
    let FieldType::Struct(el) = &*arr.elem else {
        panic!()
    };
    let FieldType::Variant(w) = field(el, "w") else {
        panic!()
    };
    assert_eq!(w.tag.indices, vec![2, 0]);
    let FieldType::Sequence(t) = field(&p, "tail") else {
        panic!()
    };
    assert_eq!(
        t.length,
        FieldPath {
            scope: Scope::EventPayload,
            indices: vec![1, 0, 0]
        }
    );
}
