//! Parses every CTF 2 metadata stream of the shared trace collection.
//!
//! Set `TRACEKIT_SHARED` to the shared directory (e.g. `/work/shared`); without it the test
//! prints that it skipped and passes.

use std::path::{Path, PathBuf};

use ctf::ir::{FieldType, Role, Scope, TraceClass};

fn shared_root() -> Option<PathBuf> {
    match std::env::var_os("TRACEKIT_SHARED") {
        Some(d) => Some(PathBuf::from(d).join("traces").join("ctf2")),
        None => {
            eprintln!("TRACEKIT_SHARED is not set: skipping the shared CTF 2 trace tests");
            None
        }
    }
}

fn find_metadata(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            find_metadata(&p, out);
        } else if p.file_name().is_some_and(|n| n == "metadata") {
            out.push(p);
        }
    }
}

fn load(root: &Path, rel: &str) -> TraceClass {
    let path = root.join(rel).join("metadata");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ctf::metadata::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn event_names(tc: &TraceClass) -> Vec<&str> {
    tc.streams
        .values()
        .flat_map(|s| s.events.values().map(|e| e.name.as_str()))
        .collect()
}

#[test]
fn every_shared_ctf2_metadata_parses() {
    let Some(root) = shared_root() else { return };
    let mut files = Vec::new();
    find_metadata(&root, &mut files);
    assert!(
        files.len() >= 12,
        "expected at least 12 CTF 2 metadata files under {}",
        root.display()
    );
    let mut failures = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(
            ctf::metadata::detect(&bytes),
            ctf::metadata::MetadataFormat::Ctf2Json,
            "{}",
            f.display()
        );
        match ctf::metadata::parse(&bytes) {
            Ok(tc) => {
                assert_eq!(tc.version, (2, 0));
                assert!(
                    !tc.streams.is_empty(),
                    "{}: no data stream class",
                    f.display()
                );
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

#[test]
fn final_spec_sequence_trace() {
    let Some(root) = shared_root() else { return };
    let tc = load(&root, "final-spec/bt-traces_succeed_sequence/host");
    assert_eq!(tc.streams.len(), 1);
    assert_eq!(event_names(&tc), ["sequence event"]);
    assert_eq!(tc.env_str("hostname"), Some("host"));
    assert_eq!(tc.clocks.len(), 1);
    let clock = &tc.clocks[0];
    assert_eq!(clock.name, "monotonic");
    assert_eq!(clock.freq, 1_000_000_000);
    assert_eq!(
        (clock.offset_s, clock.offset_cycles),
        (1375437179, 542680815)
    );
    assert!(clock.absolute);
    assert_eq!(tc.uuid.map(|u| u[0]), Some(122));
    let s = &tc.streams[&0];
    assert_eq!(s.default_clock, Some(0));
    let header = s.event_header.as_ref().unwrap();
    match &header.field("timestamp").unwrap().ty {
        FieldType::Int(i) => {
            assert_eq!(i.role, Some(Role::DefaultClockTimestamp));
            assert_eq!(i.mapped_clock.as_deref(), Some("monotonic"));
        }
        other => panic!("timestamp: {other:?}"),
    }
    let ev = &s.events[&0];
    assert_eq!(ev.loglevel, Some(1)); // "alert"
    let payload = ev.payload.as_ref().unwrap();
    match &payload.field("seq_int_field").unwrap().ty {
        FieldType::Sequence(seq) => {
            assert_eq!(seq.length.scope, Scope::EventPayload);
            assert_eq!(seq.length.indices, [0]);
        }
        other => panic!("seq_int_field: {other:?}"),
    }
}

#[test]
fn draft_lttng_trace() {
    let Some(root) = shared_root() else { return };
    let tc = load(&root, "tc-draft/CTF2-7.0-lttng-crash");
    assert_eq!(event_names(&tc), ["my_app:current_temp"]);
    assert_eq!(tc.clocks[0].freq, 1_000_000_000);
    assert_eq!(tc.clocks[0].name, "monotonic");
    assert!(tc.clocks[0].uuid.is_some());
    assert_eq!(tc.uuid.map(|u| u[0]), Some(167));
    let s = &tc.streams[&0];
    let header = s.event_header.as_ref().unwrap();
    match &header.field("v").unwrap().ty {
        FieldType::Variant(v) => {
            assert_eq!(v.tag.scope, Scope::EventHeader);
            assert_eq!(v.tag.indices, [0]);
            assert_eq!(v.select(65535), Some(1));
            assert_eq!(v.select(3), Some(0));
        }
        other => panic!("v: {other:?}"),
    }
    let pc = s.packet_context.as_ref().unwrap();
    match &pc.field("timestamp_begin").unwrap().ty {
        FieldType::Int(i) => assert_eq!(i.role, Some(Role::PacketBeginningDefaultClockTimestamp)),
        other => panic!("timestamp_begin: {other:?}"),
    }
    let ev = &s.events[&0];
    assert_eq!(ev.loglevel, Some(13)); // "debug:line"

    let tc = load(&root, "tc-draft/CTF2-7.0-debug-info");
    assert_eq!(
        event_names(&tc),
        [
            "lttng_ust_statedump:bin_info",
            "my_provider:my_first_tracepoint"
        ]
    );
    assert_eq!(tc.streams.len(), 1);

    let tc = load(&root, "tc-draft/CTF2-7.0-meta-variant-no-underscore");
    let p = tc.streams[&0].events[&0].payload.as_ref().unwrap();
    match &p.field("tag").unwrap().ty {
        FieldType::Enum(e) => assert_eq!(e.labels_for(1).collect::<Vec<_>>(), ["PELCHAT"]),
        other => panic!("tag: {other:?}"),
    }

    let tc = load(&root, "tc-draft/CTF2-vl-ints");
    let p = tc.streams[&0].events[&0].payload.as_ref().unwrap();
    assert_eq!(p.fields.len(), 25);
    assert!(matches!(&p.fields[0].ty, FieldType::VarInt(v) if !v.signed));
    assert!(matches!(&p.fields[24].ty, FieldType::VarInt(v) if v.signed));
}
