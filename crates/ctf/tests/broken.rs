//! Broken and unusual inputs: every test builds its trace in a temp dir from the hand-written
//! metadata in `common/kernel.tsdl` and packets built byte by byte, then checks exactly which
//! events, messages, errors (file and byte offset) and warnings a reader yields.

mod common;

use common::*;
use ctf::value::Value;
use ctf::Message;

fn ev(name: &str, cycles: u64, v: Value) -> Got {
    Got::Event(name.into(), cycles, v)
}

fn tick(cycles: u64) -> Got {
    ev("tick", cycles, Value::Absent)
}

#[test]
fn valid_trace_reads_fully() {
    let dir = tempfile::tempdir().unwrap();
    let p = Packet::new(0, 1000, 2000)
        .event(
            SCHED_SWITCH,
            1100,
            &sched_switch("swapper/0", 0, 0, "bash", 42),
        )
        .event(OPENAT, 1200, &openat(-100, "/etc/passwd", 0o2000000))
        .event(SENDMSG, 1300, &sendmsg(b"hi", &[3, 4]))
        .event(TAGGED, 1400, &tagged_int(-7))
        .event(TAGGED, 1500, &tagged_str("s"))
        .event(BITFIELDS, 1600, &bitfields(-2, 0x1abc, 0.5, &["a", "bc"]))
        .event_ext(TICK, 1 << 40, &[]);
    write_trace(dir.path(), KERNEL_TSDL, &[("chan_0", &p.bytes())]);
    let (got, warnings) = read_dir_stream(dir.path());
    assert_eq!(
        got,
        vec![
            ev(
                "sched_switch",
                1100,
                sched_switch_value("swapper/0", 0, 0, "bash", 42)
            ),
            ev(
                "syscall_entry_openat",
                1200,
                openat_value(-100, "/etc/passwd", 0o2000000)
            ),
            ev(
                "sys_sendmsg",
                1300,
                Value::Struct(vec![
                    Value::U64(2),
                    Value::Array(vec![Value::U64(b'h' as u64), Value::U64(b'i' as u64)]),
                    Value::U64(2),
                    Value::Array(vec![Value::I64(3), Value::I64(4)]),
                ])
            ),
            ev(
                "tagged",
                1400,
                Value::Struct(vec![
                    Value::U64(0),
                    Value::Variant(0, Box::new(Value::I64(-7)))
                ])
            ),
            ev(
                "tagged",
                1500,
                Value::Struct(vec![
                    Value::U64(1),
                    Value::Variant(1, Box::new(Value::str("s")))
                ])
            ),
            ev(
                "bitfields",
                1600,
                Value::Struct(vec![
                    Value::I64(-2),
                    Value::U64(0x1abc),
                    Value::Float(0.5),
                    Value::U64(2),
                    Value::Array(vec![Value::str("a"), Value::str("bc")]),
                ])
            ),
            tick(1 << 40),
        ]
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}
