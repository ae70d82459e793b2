//! Parses every CTF 1.8 metadata file of the shared trace collection (set `TRACEKIT_SHARED`,
//! e.g. `/work/shared`) and checks a few facts Babeltrace 2 shows for them.

use std::path::{Path, PathBuf};

use ctf::ir::{ByteOrder, Encoding, FieldType, Role, Scope, TraceClass};
use ctf::metadata::{metadata_text, MetadataFormat};

fn shared() -> Option<PathBuf> {
    testkit::shared_or_skip("the shared-trace TSDL tests")
}

fn find_metadata(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            find_metadata(&p, out);
        } else if p.file_name().is_some_and(|n| n == "metadata") {
            out.push(p);
        }
    }
}

/// The TSDL text of a metadata file, or `None` for CTF 2.
fn tsdl_text(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).unwrap();
    let (format, text) =
        metadata_text(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match format {
        MetadataFormat::Ctf2Json => None,
        MetadataFormat::TsdlPacketized => Some(text),
        MetadataFormat::TsdlText => text.trim_start().starts_with("/* CTF 1.8").then_some(text),
    }
}

fn parse_trace(root: &Path, rel: &str) -> TraceClass {
    let path = root.join("traces").join(rel).join("metadata");
    let text = tsdl_text(&path).expect("TSDL metadata");
    ctf::tsdl::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn parses_every_shared_tsdl_metadata() {
    let Some(root) = shared() else { return };
    let mut files = Vec::new();
    for d in ["kernel", "ust", "ctf"] {
        find_metadata(&root.join("traces").join(d), &mut files);
    }
    let mut parsed = 0;
    let mut failures = Vec::new();
    for f in &files {
        let Some(text) = tsdl_text(f) else { continue };
        match ctf::tsdl::parse(&text) {
            Ok(tc) => {
                assert_eq!(tc.version, (1, 8));
                assert!(!tc.streams.is_empty(), "{}", f.display());
                parsed += 1;
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    assert!(parsed >= 50, "only {parsed} TSDL metadata files found");
}

#[test]
fn many_threads_facts() {
    let Some(root) = shared() else { return };
    // Facts of the original trace: a damaged copy (another trace's metadata) is skipped loudly.
    if testkit::intact_trace(&root, "traces/kernel/many-threads").is_none() {
        return;
    }
    let tc = parse_trace(&root, "kernel/many-threads");
    assert_eq!(tc.streams.len(), 1);
    assert_eq!(tc.byte_order, ByteOrder::Little);
    let sc = &tc.streams[&0];
    let ev = &sc.events[&1180];
    assert_eq!(ev.name, "sched_switch");
    let payload = ev.payload.as_ref().unwrap();
    let FieldType::Array(a) = &payload.field("prev_comm").unwrap().ty else {
        panic!("prev_comm is not an array")
    };
    assert_eq!(a.len, 16);
    let FieldType::Int(i) = &*a.elem else {
        panic!("prev_comm element")
    };
    assert_eq!((i.size, i.signed, i.encoding), (8, false, Encoding::Utf8));
    // Packet header roles.
    let ph = tc.packet_header.as_ref().unwrap();
    let FieldType::Int(m) = &ph.field("magic").unwrap().ty else {
        panic!()
    };
    assert_eq!(m.role, Some(Role::PacketMagicNumber));
    let FieldType::Array(u) = &ph.field("uuid").unwrap().ty else {
        panic!()
    };
    assert_eq!(u.role, Some(Role::MetadataStreamUuid));
    // Compact event header: `v` is a variant tagged by `id`.
    let eh = sc.event_header.as_ref().unwrap();
    let FieldType::Variant(v) = &eh.field("v").unwrap().ty else {
        panic!()
    };
    assert_eq!(v.tag.scope, Scope::EventHeader);
    assert_eq!(v.tag.indices, vec![0]);
    assert_eq!(v.select(31), Some(1));
    assert_eq!(v.select(3), Some(0));
    let clock = &tc.clocks[sc.default_clock.unwrap()];
    assert_eq!(clock.name, "monotonic");
    assert!(
        clock.absolute,
        "Babeltrace 2 shows LTTng clocks with a Unix-epoch origin"
    );
    assert_eq!(tc.env_str("hostname"), Some("wilbrod"));
}

#[test]
fn flipping_endianness_is_big_endian() {
    let Some(root) = shared() else { return };
    if testkit::intact_trace(&root, "traces/kernel/flipping-endianness").is_none() {
        return;
    }
    let tc = parse_trace(&root, "kernel/flipping-endianness");
    assert_eq!(tc.byte_order, ByteOrder::Big);
    let ph = tc.packet_header.as_ref().unwrap();
    let FieldType::Int(m) = &ph.field("magic").unwrap().ty else {
        panic!()
    };
    assert_eq!(m.byte_order, ByteOrder::Big);
    let ev = &tc.streams[&0].events[&5];
    assert_eq!(ev.name, "lttng_statedump_interrupt");
}

#[test]
fn meta_variant_underscore_rules() {
    let Some(root) = shared() else { return };
    // (trace, option names as Babeltrace 2 shows them, value selecting each)
    let cases: &[(&str, &[&str])] = &[
        (
            "meta-variant-no-underscore",
            &["COSSETTE", "PELCHAT", "VOISINE"],
        ),
        (
            "meta-variant-one-underscore",
            &["COSSETTE", "PELCHAT", "VOISINE"],
        ),
        (
            "meta-variant-same-with-underscore",
            &["COSSETTE", "PELCHAT", "_PELCHAT"],
        ),
        (
            "meta-variant-two-underscores",
            &["COSSETTE", "_PELCHAT", "VOISINE"],
        ),
    ];
    for (trace, names) in cases {
        let tc = parse_trace(&root, &format!("ctf/succeed/{trace}"));
        let ev = tc.streams[&0].events.values().next().unwrap();
        let p = ev.payload.as_ref().unwrap();
        let FieldType::Variant(v) = &p.field("var").unwrap().ty else {
            panic!()
        };
        assert_eq!(v.tag.indices, vec![0], "{trace}");
        let got: Vec<&str> = v.options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(&got, names, "{trace}");
        for k in 0..3 {
            assert_eq!(v.select(k as i128), Some(k), "{trace} value {k}");
        }
    }
    let tc = parse_trace(&root, "ctf/succeed/meta-variant-reserved-keywords");
    let ev = tc.streams[&0].events.values().next().unwrap();
    let FieldType::Variant(v) = &ev.payload.as_ref().unwrap().field("var").unwrap().ty else {
        panic!()
    };
    assert_eq!(v.options.len(), 28);
    assert_eq!(v.options[1].name, "callsite");
    assert_eq!(v.select(1), Some(1));
    assert_eq!(v.options[25].name, "_Bool");
}
