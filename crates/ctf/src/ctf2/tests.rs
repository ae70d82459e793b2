//! Unit tests of the CTF 2 front end.

use super::*;
use crate::ir::{BitArrayKind, ByteOrder, DisplayBase, FieldType, IntRange, Length, Role, Scope};

/// Builds a JSON text sequence from fragments.
fn seq(frags: &[&str]) -> String {
    frags.iter().map(|f| format!("\u{1e}{f}\n")).collect()
}

const PRE: &str =
    r#"{"type":"preamble","version":2,"uuid":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}"#;

fn u(len: u32, extra: &str) -> String {
    format!(
        r#"{{"type":"fixed-length-unsigned-integer","length":{len},"byte-order":"little-endian","alignment":8{extra}}}"#
    )
}

fn member(name: &str, fc: &str) -> String {
    format!(r#"{{"name":"{name}","field-class":{fc}}}"#)
}

fn st(members: &[String]) -> String {
    format!(
        r#"{{"type":"structure","member-classes":[{}]}}"#,
        members.join(",")
    )
}

fn field<'a>(s: &'a crate::ir::StructType, name: &str) -> &'a FieldType {
    &s.field(name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .ty
}

fn full_trace() -> String {
    let ph = st(&[
        member(
            "magic",
            &u(
                32,
                r#","roles":["packet-magic-number"],"preferred-display-base":16"#,
            ),
        ),
        member(
            "uuid",
            r#"{"type":"static-length-blob","length":16,"roles":["metadata-stream-uuid"]}"#,
        ),
        member("stream_id", &u(8, r#","roles":["data-stream-class-id"]"#)),
    ]);
    let pc = st(&[
        member("packet_size", &u(32, r#","roles":["packet-total-length"]"#)),
        member(
            "content_size",
            &u(32, r#","roles":["packet-content-length"]"#),
        ),
        member(
            "ts_begin",
            &u(64, r#","roles":["default-clock-timestamp"]"#),
        ),
        member(
            "ts_end",
            &u(64, r#","roles":["packet-end-default-clock-timestamp"]"#),
        ),
        member(
            "disc",
            &u(
                32,
                r#","roles":["discarded-event-record-counter-snapshot","bogus"]"#,
            ),
        ),
        member(
            "seq",
            &u(32, r#","roles":["unknown-role","packet-sequence-number"]"#),
        ),
    ]);
    let eh = st(&[
        member("id", &u(16, r#","roles":["event-record-class-id"]"#)),
        member(
            "timestamp",
            &u(64, r#","roles":["default-clock-timestamp"]"#),
        ),
    ]);
    let trace = format!(
        r#"{{"type":"trace-class","environment":{{"zeta":"z","alpha":-3}},"packet-header-field-class":{ph}}}"#
    );
    let clock = r#"{"type":"clock-class","id":"mono","name":"monotonic","frequency":1000,"offset-from-origin":{"seconds":-5,"cycles":7},"origin":"unix-epoch","precision":3,"uid":"5f3ed925-9d73-4637-b8e4-02077abc8c8f","description":"d"}"#;
    let clock2 = r#"{"type":"clock-class","id":"other","frequency":1,"origin":{"namespace":"x","name":"y","uid":"z"}}"#;
    let dsc = format!(
        r#"{{"type":"data-stream-class","id":3,"default-clock-class-id":"mono","packet-context-field-class":{pc},"event-record-header-field-class":{eh}}}"#
    );
    let enum_fc = r#"{"type":"fixed-length-signed-integer","length":8,"byte-order":"big-endian","mappings":{"ZED":[[-5,-1],[10,10]],"ALPHA":[[0,3]],"BOTH":[[2,2]]}}"#;
    let payload = st(&[
        member("e", enum_fc),
        member(
            "f",
            r#"{"type":"fixed-length-floating-point-number","length":64,"byte-order":"little-endian","alignment":8}"#,
        ),
        member(
            "b",
            r#"{"type":"fixed-length-boolean","length":8,"byte-order":"little-endian"}"#,
        ),
        member(
            "bm",
            r#"{"type":"fixed-length-bit-map","length":8,"byte-order":"little-endian","flags":{"A":[[0,0]],"B":[[1,3]]}}"#,
        ),
        member(
            "vu",
            r#"{"type":"variable-length-unsigned-integer","mappings":{"X":[[1,1]]},"preferred-display-base":8}"#,
        ),
        member("s", r#"{"type":"null-terminated-string"}"#),
        member("ss", r#"{"type":"static-length-string","length":4}"#),
        member("n", &u(8, "")),
        member(
            "ds",
            r#"{"type":"dynamic-length-string","length-field-location":{"origin":"event-record-payload","path":["n"]}}"#,
        ),
        member(
            "blob",
            r#"{"type":"dynamic-length-blob","media-type":"image/png","length-field-location":{"path":["n"]}}"#,
        ),
        member(
            "arr",
            r#"{"type":"static-length-array","length":3,"minimum-alignment":32,"element-field-class":{"type":"null-terminated-string"}}"#,
        ),
    ]);
    let erc = format!(
        r#"{{"type":"event-record-class","id":9,"data-stream-class-id":3,"name":"ev","attributes":{{"babeltrace.org,2020":{{"log-level":"warning","emf-uri":"http://x"}}}},"payload-field-class":{payload}}}"#
    );
    seq(&[PRE, &trace, clock, clock2, &dsc, &erc])
}

#[test]
fn full_trace_model() {
    let tc = parse(&full_trace()).unwrap();
    assert_eq!(tc.version, (2, 0));
    assert_eq!(
        tc.uuid,
        Some([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16])
    );
    assert_eq!(tc.byte_order, ByteOrder::Little);
    // Environment keeps declaration order.
    assert_eq!(
        tc.env,
        vec![
            ("zeta".into(), EnvValue::Str("z".into())),
            ("alpha".into(), EnvValue::Int(-3))
        ]
    );

    let ph = tc.packet_header.as_ref().unwrap();
    match field(ph, "magic") {
        FieldType::Int(i) => {
            assert_eq!(i.role, Some(Role::PacketMagicNumber));
            assert_eq!(i.base, DisplayBase::Hexadecimal);
            assert_eq!((i.size, i.align, i.signed), (32, 8, false));
        }
        t => panic!("{t:?}"),
    }
    match field(ph, "uuid") {
        FieldType::Blob(b) => {
            assert_eq!(b.length, Length::Static(16));
            assert_eq!(b.role, Some(Role::MetadataStreamUuid));
            assert_eq!(b.media_type, "application/octet-stream");
        }
        t => panic!("{t:?}"),
    }

    assert_eq!(tc.clocks.len(), 2);
    let c = &tc.clocks[0];
    assert_eq!(c.name, "monotonic");
    assert_eq!(
        (c.freq, c.offset_s, c.offset_cycles, c.precision),
        (1000, -5, 7, 3)
    );
    assert!(c.absolute);
    assert_eq!(c.uuid.map(|u| (u[0], u[15])), Some((0x5f, 0x8f)));
    assert_eq!(c.description.as_deref(), Some("d"));
    let c2 = &tc.clocks[1];
    assert_eq!(c2.name, "other");
    assert!(!c2.absolute);
    assert_eq!(c2.uuid, None);

    let s = &tc.streams[&3];
    assert_eq!(s.default_clock, Some(0));
    let pc = s.packet_context.as_ref().unwrap();
    let role_of = |t: &FieldType| match t {
        FieldType::Int(i) => (i.role, i.mapped_clock.clone()),
        t => panic!("{t:?}"),
    };
    assert_eq!(
        role_of(field(pc, "packet_size")),
        (Some(Role::PacketTotalLength), None)
    );
    assert_eq!(
        role_of(field(pc, "content_size")),
        (Some(Role::PacketContentLength), None)
    );
    assert_eq!(
        role_of(field(pc, "ts_begin")),
        (
            Some(Role::PacketBeginningDefaultClockTimestamp),
            Some("monotonic".into())
        )
    );
    assert_eq!(
        role_of(field(pc, "ts_end")),
        (
            Some(Role::PacketEndDefaultClockTimestamp),
            Some("monotonic".into())
        )
    );
    assert_eq!(
        role_of(field(pc, "disc")).0,
        Some(Role::DiscardedEventRecordCounterSnapshot)
    );
    assert_eq!(
        role_of(field(pc, "seq")).0,
        Some(Role::PacketSequenceNumber)
    );
    let eh = s.event_header.as_ref().unwrap();
    assert_eq!(role_of(field(eh, "id")).0, Some(Role::EventRecordClassId));
    assert_eq!(
        role_of(field(eh, "timestamp")),
        (Some(Role::DefaultClockTimestamp), Some("monotonic".into()))
    );

    let ev = &s.events[&9];
    assert_eq!(ev.name, "ev");
    assert_eq!(ev.loglevel, Some(4));
    assert_eq!(ev.model_emf_uri.as_deref(), Some("http://x"));
    let p = ev.payload.as_ref().unwrap();
    match field(p, "e") {
        FieldType::Enum(e) => {
            assert!(e.int.signed);
            assert_eq!(e.int.byte_order, ByteOrder::Big);
            assert_eq!(e.int.align, 1);
            let labels: Vec<_> = e.mappings.iter().map(|m| m.label.as_str()).collect();
            assert_eq!(labels, ["ZED", "ALPHA", "BOTH"]);
            assert_eq!(
                e.mappings[0].ranges,
                [
                    IntRange {
                        lower: -5,
                        upper: -1
                    },
                    IntRange {
                        lower: 10,
                        upper: 10
                    }
                ]
            );
            assert_eq!(e.labels_for(2).collect::<Vec<_>>(), ["ALPHA", "BOTH"]);
        }
        t => panic!("{t:?}"),
    }
    assert!(
        matches!(field(p, "f"), FieldType::Float(f) if f.exp_dig == 11 && f.mant_dig == 53 && f.align == 8)
    );
    assert!(
        matches!(field(p, "b"), FieldType::BitArray(b) if b.kind == BitArrayKind::Boolean && b.int.size == 8)
    );
    match field(p, "bm") {
        FieldType::BitArray(b) => {
            assert_eq!(b.kind, BitArrayKind::BitMap);
            assert_eq!(b.flags[1].label, "B");
            assert_eq!(b.flags[1].ranges, [IntRange { lower: 1, upper: 3 }]);
        }
        t => panic!("{t:?}"),
    }
    match field(p, "vu") {
        FieldType::VarInt(v) => {
            assert!(!v.signed);
            assert_eq!(v.base, DisplayBase::Octal);
            assert_eq!(v.mappings[0].label, "X");
        }
        t => panic!("{t:?}"),
    }
    assert!(matches!(field(p, "s"), FieldType::String(_)));
    assert!(matches!(field(p, "ss"), FieldType::SizedString(s) if s.length == Length::Static(4)));
    let n_path = FieldPath {
        scope: Scope::EventPayload,
        indices: vec![7],
    };
    assert!(
        matches!(field(p, "ds"), FieldType::SizedString(s) if s.length == Length::Dynamic(n_path.clone()))
    );
    match field(p, "blob") {
        FieldType::Blob(b) => {
            assert_eq!(b.length, Length::Dynamic(n_path));
            assert_eq!(b.media_type, "image/png");
        }
        t => panic!("{t:?}"),
    }
    assert!(matches!(field(p, "arr"), FieldType::Array(a) if a.len == 3 && a.min_align == 32));
}

use crate::ir::FieldPath;

fn one_event(payload: &str) -> Result<TraceClass, MetadataError> {
    let erc = format!(r#"{{"type":"event-record-class","payload-field-class":{payload}}}"#);
    parse(&seq(&[PRE, r#"{"type":"data-stream-class"}"#, &erc]))
}

fn payload_of(tc: &TraceClass) -> &crate::ir::StructType {
    tc.streams[&0].events[&0].payload.as_ref().unwrap()
}

#[test]
fn variant_ranges_and_paths_through_structures() {
    let inner = st(&[
        member("sel", &u(8, "")),
        member(
            "v",
            r#"{"type":"variant","selector-field-location":{"origin":"event-record-payload","path":["outer","sel"]},
               "options":[{"name":"a","field-class":{"type":"null-terminated-string"},"selector-field-ranges":[[0,0],[5,9]]},
                          {"name":"b","field-class":{"type":"fixed-length-boolean","length":8,"byte-order":"little-endian"},"selector-field-ranges":[[1,4]]}]}"#,
        ),
    ]);
    let payload = st(&[member("x", &u(8, "")), member("outer", &inner)]);
    let tc = one_event(&payload).unwrap();
    let outer = payload_of(&tc)
        .field("outer")
        .unwrap()
        .ty
        .as_struct()
        .unwrap();
    match field(outer, "v") {
        FieldType::Variant(v) => {
            assert_eq!(
                v.tag,
                FieldPath {
                    scope: Scope::EventPayload,
                    indices: vec![1, 0]
                }
            );
            assert_eq!(
                v.options[0].ranges,
                [
                    IntRange { lower: 0, upper: 0 },
                    IntRange { lower: 5, upper: 9 }
                ]
            );
            assert_eq!(v.select(7), Some(0));
            assert_eq!(v.select(2), Some(1));
            assert_eq!(v.select(10), None);
        }
        t => panic!("{t:?}"),
    }
}

#[test]
fn relative_locations_with_parent_steps() {
    // payload { len: u8, s: { inner_len: u8, a: dyn[../len] , b: dyn[inner_len] } }
    let inner = st(&[
        member("inner_len", &u(8, "")),
        member(
            "a",
            r#"{"type":"dynamic-length-array","length-field-location":{"path":[null,"len"]},"element-field-class":{"type":"null-terminated-string"}}"#,
        ),
        member(
            "b",
            r#"{"type":"dynamic-length-array","length-field-location":{"path":["inner_len"]},"element-field-class":{"type":"null-terminated-string"}}"#,
        ),
    ]);
    let tc = one_event(&st(&[member("len", &u(8, "")), member("s", &inner)])).unwrap();
    let s = payload_of(&tc).field("s").unwrap().ty.as_struct().unwrap();
    match (field(s, "a"), field(s, "b")) {
        (FieldType::Sequence(a), FieldType::Sequence(b)) => {
            assert_eq!(
                a.length,
                FieldPath {
                    scope: Scope::EventPayload,
                    indices: vec![0]
                }
            );
            assert_eq!(
                b.length,
                FieldPath {
                    scope: Scope::EventPayload,
                    indices: vec![1, 0]
                }
            );
        }
        t => panic!("{t:?}"),
    }
}

#[test]
fn path_into_variant_option_and_through_arrays() {
    // The selector of the variant lives inside an array element structure.
    let elem = st(&[
        member("k", &u(8, "")),
        member(
            "v",
            r#"{"type":"variant","selector-field-location":{"path":["k"]},"options":[
                {"name":"x","field-class":{"type":"structure","member-classes":[{"name":"n","field-class":{"type":"fixed-length-unsigned-integer","length":8,"byte-order":"little-endian"}}]},"selector-field-ranges":[[0,0]]},
                {"name":"y","field-class":{"type":"null-terminated-string"},"selector-field-ranges":[[1,1]]}]}"#,
        ),
    ]);
    let arr =
        format!(r#"{{"type":"static-length-array","length":2,"element-field-class":{elem}}}"#);
    let after = r#"{"type":"dynamic-length-array","length-field-location":{"origin":"event-record-payload","path":["arr","v","n"]},"element-field-class":{"type":"null-terminated-string"}}"#;
    let tc = one_event(&st(&[member("arr", &arr), member("after", after)])).unwrap();
    let p = payload_of(&tc);
    match field(p, "arr") {
        FieldType::Array(a) => match &*a.elem {
            FieldType::Struct(e) => match field(e, "v") {
                FieldType::Variant(v) => assert_eq!(v.tag.indices, [0, 0]),
                t => panic!("{t:?}"),
            },
            t => panic!("{t:?}"),
        },
        t => panic!("{t:?}"),
    }
    match field(p, "after") {
        // arr(0) / v(1) / option x(0) / n(0)
        FieldType::Sequence(s) => assert_eq!(s.length.indices, [0, 1, 0, 0]),
        t => panic!("{t:?}"),
    }
}

#[test]
fn optional_with_boolean_and_integer_selectors() {
    let payload = st(&[
        member(
            "flag",
            r#"{"type":"fixed-length-boolean","length":8,"byte-order":"little-endian"}"#,
        ),
        member("sel", &u(8, "")),
        member(
            "o1",
            r#"{"type":"optional","selector-field-location":{"path":["flag"]},"field-class":{"type":"null-terminated-string"}}"#,
        ),
        member(
            "o2",
            r#"{"type":"optional","selector-field-location":{"path":["sel"]},"selector-field-ranges":[[3,4]],"field-class":{"type":"null-terminated-string"}}"#,
        ),
    ]);
    let tc = one_event(&payload).unwrap();
    let p = payload_of(&tc);
    match (field(p, "o1"), field(p, "o2")) {
        (FieldType::Optional(a), FieldType::Optional(b)) => {
            assert_eq!(a.selector.indices, [0]);
            assert!(a.ranges.is_empty());
            assert_eq!(b.selector.indices, [1]);
            assert_eq!(b.ranges, [IntRange { lower: 3, upper: 4 }]);
        }
        t => panic!("{t:?}"),
    }
    // An integer selector needs ranges.
    let bad = st(&[
        member("sel", &u(8, "")),
        member(
            "o",
            r#"{"type":"optional","selector-field-location":{"path":["sel"]},"field-class":{"type":"null-terminated-string"}}"#,
        ),
    ]);
    let e = one_event(&bad).unwrap_err();
    assert!(e.message.contains("selector-field-ranges"), "{e}");
}

#[test]
fn field_class_aliases() {
    let alias = format!(
        r#"{{"type":"field-class-alias","name":"u8","field-class":{}}}"#,
        u(8, "")
    );
    let alias2 = r#"{"type":"field-class-alias","name":"pair","field-class":{"type":"structure","member-classes":[{"name":"a","field-class":"u8"},{"name":"b","field-class":"u8"}]}}"#;
    let erc = r#"{"type":"event-record-class","payload-field-class":{"type":"structure","member-classes":[{"name":"p","field-class":"pair"},{"name":"q","field-class":"u8"}]}}"#;
    let tc = parse(&seq(&[
        PRE,
        &alias,
        alias2,
        r#"{"type":"data-stream-class"}"#,
        erc,
    ]))
    .unwrap();
    let p = payload_of(&tc);
    assert!(matches!(field(p, "q"), FieldType::Int(i) if i.size == 8));
    assert_eq!(
        p.field("p").unwrap().ty.as_struct().unwrap().fields.len(),
        2
    );
}

#[test]
fn draft_forms_are_accepted() {
    // Trace Compass 7.0-era draft: uuid in the trace class, clock `name`/`uuid`, stream
    // `default-clock-class-name`, `user-attributes`, `*-enumeration` types, array locations.
    let pre = r#"{"type":"preamble","version":2}"#;
    let trace = r#"{"type":"trace-class","uuid":[9,9,9,9,9,9,9,9,9,9,9,9,9,9,9,9]}"#;
    let clock = r#"{"type":"clock-class","name":"monotonic","frequency":1000000000,"offset-from-origin":{"seconds":10,"cycles":2},"uuid":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}"#;
    let eh = r#"{"type":"structure","member-classes":[
        {"name":"id","field-class":{"type":"fixed-length-unsigned-enumeration","length":16,"byte-order":"little-endian","alignment":8,"mappings":{"compact":[[0,65534]],"extended":[[65535,65535]]},"roles":["event-record-class-id"]}},
        {"name":"v","field-class":{"type":"variant","selector-field-location":["event-record-header","id"],"options":[
            {"name":"compact","field-class":{"type":"structure","member-classes":[{"name":"timestamp","field-class":{"type":"fixed-length-unsigned-integer","length":32,"byte-order":"little-endian","roles":["default-clock-timestamp"]}}]},"selector-field-ranges":[[0,65534]]},
            {"name":"extended","field-class":{"type":"structure","member-classes":[{"name":"timestamp","field-class":{"type":"fixed-length-unsigned-integer","length":64,"byte-order":"little-endian","roles":["default-clock-timestamp"]}}]},"selector-field-ranges":[[65535,65535]]}]}}]}"#;
    let dsc = format!(
        r#"{{"type":"data-stream-class","default-clock-class-name":"monotonic","event-record-header-field-class":{eh}}}"#
    );
    let erc = r#"{"type":"event-record-class","name":"x","user-attributes":{"babeltrace.org,2020":{"log-level":"debug:line"}}}"#;
    let tc = parse(&seq(&[pre, trace, clock, &dsc, erc])).unwrap();
    assert_eq!(tc.uuid, Some([9; 16]));
    assert_eq!(tc.clocks[0].name, "monotonic");
    assert_eq!(tc.clocks[0].uuid, Some([1; 16]));
    assert!(!tc.clocks[0].absolute);
    assert_eq!(tc.clocks[0].cycles_to_ns(3), 10_000_000_005);
    let s = &tc.streams[&0];
    assert_eq!(s.default_clock, Some(0));
    assert_eq!(s.events[&0].loglevel, Some(13));
    let eh = s.event_header.as_ref().unwrap();
    assert!(
        matches!(field(eh, "id"), FieldType::Enum(e) if e.int.role == Some(Role::EventRecordClassId))
    );
    match field(eh, "v") {
        FieldType::Variant(v) => {
            assert_eq!(
                v.tag,
                FieldPath {
                    scope: Scope::EventHeader,
                    indices: vec![0]
                }
            );
            match &v.options[1].ty {
                FieldType::Struct(x) => assert!(matches!(field(x, "timestamp"),
                    FieldType::Int(i) if i.mapped_clock.as_deref() == Some("monotonic") && i.size == 64)),
                t => panic!("{t:?}"),
            }
        }
        t => panic!("{t:?}"),
    }
}

/// Parses and returns the error, checking it names a fragment.
fn err(text: &str) -> MetadataError {
    let e = parse(text).expect_err("accepted bad metadata");
    assert!(
        e.message.contains("fragment") || e.message.contains("preamble"),
        "{e}"
    );
    e
}

#[test]
fn errors_name_fragment_and_property() {
    let dsc = r#"{"type":"data-stream-class"}"#;
    // First fragment is not a preamble.
    let e = err(&seq(&[dsc]));
    assert!(
        e.message.contains("fragment 1 (data-stream-class)") && e.message.contains("preamble"),
        "{e}"
    );
    // Unsupported version.
    let e = err(&seq(&[r#"{"type":"preamble","version":3}"#]));
    assert!(e.message.contains("version"), "{e}");
    // Invalid JSON: the exact line is reported.
    let e = err(&format!(
        "{}\u{1e}{{\n\"type\":\n\"data-stream-class\",,\n}}",
        seq(&[PRE])
    ));
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("fragment 2: invalid JSON"), "{e}");
    // Semantic errors: the line where the fragment starts.
    let e = err(&seq(&[PRE, r#"{"type":"clock-class","id":"c"}"#]));
    assert_eq!(e.line, Some(2));
    assert!(
        e.message.contains("fragment 2 (clock-class)") && e.message.contains("frequency"),
        "{e}"
    );
    // Unknown fragment type, non-object fragment, missing type.
    assert!(err(&seq(&[PRE, r#"{"type":"weird"}"#]))
        .message
        .contains("unknown fragment type"));
    assert!(err(&seq(&[PRE, "[1]"])).message.contains("JSON object"));
    assert!(err(&seq(&[PRE, "{}"])).message.contains("`type`"));
    // Unknown clock, stream, alias; duplicates.
    let e = err(&seq(&[
        PRE,
        r#"{"type":"data-stream-class","default-clock-class-id":"nope"}"#,
    ]));
    assert!(
        e.message.contains("default-clock-class-id") && e.message.contains("nope"),
        "{e}"
    );
    let e = err(&seq(&[
        PRE,
        r#"{"type":"event-record-class","data-stream-class-id":4}"#,
    ]));
    assert!(e.message.contains("data-stream-class-id"), "{e}");
    assert!(err(&seq(&[PRE, dsc, dsc]))
        .message
        .contains("duplicate data stream class id 0"));
    let erc = r#"{"type":"event-record-class"}"#;
    assert!(err(&seq(&[PRE, dsc, erc, erc]))
        .message
        .contains("duplicate event record class id 0"));
    let e = one_event(&st(&[member("a", "\"nope\"")])).unwrap_err();
    assert!(
        e.message.contains("payload-field-class")
            && e.message.contains("member `a`")
            && e.message.contains("alias `nope`"),
        "{e}"
    );
    // Timestamp role without a default clock.
    let e = one_event(&st(&[member(
        "t",
        &u(64, r#","roles":["default-clock-timestamp"]"#),
    )]))
    .unwrap_err();
    assert!(e.message.contains("default clock"), "{e}");
}

#[test]
fn field_class_errors() {
    let check = |payload: String, needle: &str| {
        let e = one_event(&payload).expect_err(needle);
        assert!(e.message.contains("fragment 3 (event-record-class)"), "{e}");
        assert!(e.message.contains(needle), "{needle}: {e}");
    };
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-unsigned-integer","length":0}"#,
        )]),
        "`length` must be in 1..=64",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-unsigned-integer","length":65}"#,
        )]),
        "`length` must be in 1..=64",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-unsigned-integer","length":8,"byte-order":"little-endian","alignment":3}"#,
        )]),
        "`alignment` must be a power of two",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-unsigned-integer","length":8,"byte-order":"middle"}"#,
        )]),
        "byte-order",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-unsigned-integer","length":8,"byte-order":"little-endian","bit-order":"last-to-first"}"#,
        )]),
        "bit-order",
    );
    check(
        st(&[member("a", &u(8, r#","mappings":{"x":[[3,1]]}"#))]),
        "lower > upper",
    );
    check(
        st(&[member(
            "a",
            &u(8, r#","mappings":{"x":[[0,18446744073709551616]]}"#),
        )]),
        "64-bit",
    );
    check(
        st(&[member("a", &u(8, r#","preferred-display-base":7"#))]),
        "preferred-display-base",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"fixed-length-floating-point-number","length":24,"byte-order":"big-endian"}"#,
        )]),
        "floating-point",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"null-terminated-string","encoding":"utf-16le"}"#,
        )]),
        "encoding",
    );
    check(
        st(&[member("a", r#"{"type":"mystery"}"#)]),
        "unknown field class type `mystery`",
    );
    check(st(&[member("a", "1")]), "a field class must be an object");
    check(
        st(&[member("a", &u(8, "")), member("a", &u(8, ""))]),
        "duplicate member name `a`",
    );
    check(
        r#"{"type":"null-terminated-string"}"#.to_string(),
        "must be a structure",
    );
    check(
        st(&[member(
            "a",
            r#"{"type":"variant","selector-field-location":{"path":["x"]},"options":[]}"#,
        )]),
        "`options` must not be empty",
    );
    // Field location problems.
    let dyn_arr = |loc: &str| {
        format!(
            r#"{{"type":"dynamic-length-array","length-field-location":{loc},"element-field-class":{{"type":"null-terminated-string"}}}}"#
        )
    };
    check(
        st(&[member("a", &dyn_arr(r#"{"path":["nope"]}"#))]),
        "no member named `nope`",
    );
    check(
        st(&[member("a", &dyn_arr(r#"{"path":[null,"x"]}"#))]),
        "goes above",
    );
    check(
        st(&[member("a", &dyn_arr(r#"{"path":[]}"#))]),
        "names no member",
    );
    check(
        st(&[member(
            "a",
            &dyn_arr(r#"{"origin":"somewhere","path":["x"]}"#),
        )]),
        "invalid `origin`",
    );
    check(
        st(&[member(
            "a",
            &dyn_arr(r#"{"origin":"packet-header","path":["x"]}"#),
        )]),
        "has no field class",
    );
    check(
        st(&[
            member("a", &dyn_arr(r#"{"path":["b"]}"#)),
            member("b", &u(8, "")),
        ]),
        "does not precede",
    );
    check(
        st(&[
            member(
                "b",
                r#"{"type":"fixed-length-signed-integer","length":8,"byte-order":"little-endian"}"#,
            ),
            member("a", &dyn_arr(r#"{"path":["b"]}"#)),
        ]),
        "not an unsigned integer",
    );
    check(
        st(&[
            member("b", r#"{"type":"null-terminated-string"}"#),
            member("a", &dyn_arr(r#"{"path":["b"]}"#)),
        ]),
        "not an unsigned integer",
    );
}

#[test]
fn later_scope_origin_is_rejected() {
    let pc = st(&[member(
        "a",
        r#"{"type":"dynamic-length-array","length-field-location":{"origin":"event-record-payload","path":["x"]},"element-field-class":{"type":"null-terminated-string"}}"#,
    )]);
    let e = err(&seq(&[
        PRE,
        &format!(r#"{{"type":"data-stream-class","packet-context-field-class":{pc}}}"#),
    ]));
    assert!(e.message.contains("decoded after"), "{e}");
}

#[test]
fn bounded_nesting_and_alias_explosion() {
    // Deeply nested structures.
    let mut fc = r#"{"type":"null-terminated-string"}"#.to_string();
    for _ in 0..100 {
        fc = st(&[member("x", &fc)]);
    }
    // (the JSON reader's depth limit catches it before the field-class limit)
    let e = one_event(&fc).unwrap_err();
    assert!(
        e.message.contains("nesting deeper") || e.message.contains("nested deeper"),
        "{e}"
    );
    // Alias chains that would nest too deeply.
    let mut frags = vec![PRE.to_string(), r#"{"type":"field-class-alias","name":"a0","field-class":{"type":"null-terminated-string"}}"#.to_string()];
    for i in 1..100 {
        frags.push(format!(
            r#"{{"type":"field-class-alias","name":"a{i}","field-class":{}}}"#,
            st(&[member("x", &format!("\"a{}\"", i - 1))])
        ));
    }
    let refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    let e = err(&seq(&refs));
    assert!(e.message.contains("deeper"), "{e}");
    // Alias doubling (exponential expansion) hits the node budget.
    let mut frags = vec![PRE.to_string(), r#"{"type":"field-class-alias","name":"a0","field-class":{"type":"null-terminated-string"}}"#.to_string()];
    for i in 1..40 {
        let prev = format!("\"a{}\"", i - 1);
        frags.push(format!(
            r#"{{"type":"field-class-alias","name":"a{i}","field-class":{}}}"#,
            st(&[member("x", &prev), member("y", &prev)])
        ));
    }
    let refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    let e = err(&seq(&refs));
    assert!(e.message.contains("too many field classes"), "{e}");
}

#[test]
fn never_panics_on_truncated_or_mutated_input() {
    let good = full_trace();
    for end in 0..good.len() {
        if good.is_char_boundary(end) {
            let _ = parse(&good[..end]);
        }
    }
    // Byte mutations (keeping UTF-8 validity by working on ASCII).
    let bytes = good.as_bytes();
    let replacements = [b'"', b'[', b'{', b'}', b'-', b'9', b'\x1e', b'n', b','];
    let mut state = 0x1234_5678u64;
    for _ in 0..3000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pos = (state >> 33) as usize % bytes.len();
        let rep = replacements[(state >> 20) as usize % replacements.len()];
        let mut m = bytes.to_vec();
        m[pos] = rep;
        if let Ok(s) = String::from_utf8(m) {
            let _ = parse(&s);
        }
    }
}

#[test]
fn empty_and_preamble_only() {
    assert!(parse("").is_err());
    assert!(parse("\u{1e}\n\u{1e}  ").is_err());
    let tc = parse(&seq(&[PRE])).unwrap();
    assert!(tc.streams.is_empty());
    assert!(tc.packet_header.is_none());
}
