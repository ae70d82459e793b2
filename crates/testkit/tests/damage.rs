//! `trace_damage` on generated traces: intact ones have none; a directory with one trace's
//! metadata and another trace's streams (the way the shared `many-threads` was damaged) has
//! it, naming the foreign stream files and byte offsets, and counts the sound streams.

use ctf::ir::ByteOrder;
use testkit::{check_trace, mix_traces, trace_damage, write_small_trace};

#[test]
fn intact_traces_have_no_damage() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, bo) in [("le", ByteOrder::Little), ("be", ByteOrder::Big)] {
        let dir = tmp.path().join(name);
        let events = write_small_trace(&dir, bo, 1);
        let check = check_trace(&dir);
        assert_eq!(check.problems, Vec::<String>::new(), "{name}");
        assert_eq!((check.sound_files, check.sound_events), (2, events));
        assert_eq!(trace_damage(&dir), None);
    }
}

#[test]
fn streams_of_the_other_byte_order_are_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let events = write_small_trace(&a, ByteOrder::Big, 1);
    write_small_trace(&b, ByteOrder::Little, 2);
    let mixed = tmp.path().join("mixed");
    mix_traces(&a, &b, &mixed);
    let check = check_trace(&mixed);
    assert_eq!((check.sound_files, check.sound_events), (2, events));
    assert_eq!(check.problems.len(), 2, "{:?}", check.problems);
    for (p, cpu) in check.problems.iter().zip(0..) {
        let file = mixed.join(format!("other_chan_{cpu}"));
        assert!(
            p.starts_with(&format!("{}: at byte 0: bad packet magic", file.display())),
            "{p}"
        );
    }
    let damage = trace_damage(&mixed).unwrap();
    assert!(damage.contains("byte order differs"), "{damage}");
}

#[test]
fn streams_of_another_trace_with_the_same_byte_order_are_damage() {
    // They decode (same layout), but their packet UUID is not the metadata's.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_small_trace(&a, ByteOrder::Little, 1);
    write_small_trace(&b, ByteOrder::Little, 2);
    let mixed = tmp.path().join("mixed");
    mix_traces(&a, &b, &mixed);
    let damage = trace_damage(&mixed).unwrap();
    assert!(damage.contains("UUID differs"), "{damage}");
    assert_eq!(check_trace(&mixed).sound_files, 2);
}

#[test]
fn unreadable_metadata_is_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    write_small_trace(&dir, ByteOrder::Little, 1);
    std::fs::write(dir.join("metadata"), "/* CTF 1.8 */ trace {").unwrap();
    let damage = trace_damage(&dir).unwrap();
    assert!(damage.contains("metadata"), "{damage}");
}
