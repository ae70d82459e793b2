//! The pure pipeline without a kernel: format text and hand-made ring-buffer pages are decoded,
//! converted to LTTng classes and written as CTF, then read back with tracekit's reader.

use ctf::value::Value;
use ctf::writer::{EventHeaderKind, TraceWriter, WriterOptions};
use record::convert::{select_events, syscall_def, Converter};
use record::format::{parse_format, parse_header_page};
use record::page::{decode_page, PageBuilder};
use record::statedump::{ProcSnapshot, ThreadState};

const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
";

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
";

fn format(name: &str, id: u16, fields: &str) -> String {
    format!("name: {name}\nID: {id}\nformat:\n{COMMON}\n{fields}\nprint fmt: \"x\"\n")
}

fn record(ty: u16, pid: i32, body: &[u8]) -> Vec<u8> {
    let mut r = ty.to_le_bytes().to_vec();
    r.extend_from_slice(&[0, 0]);
    r.extend_from_slice(&pid.to_le_bytes());
    r.extend_from_slice(body);
    r
}

fn sys_enter(nr: i64, args: [u64; 6]) -> Vec<u8> {
    let mut b = nr.to_le_bytes().to_vec();
    for a in args {
        b.extend_from_slice(&a.to_le_bytes());
    }
    record(21, 77, &b)
}

fn sys_exit(nr: i64, ret: i64) -> Vec<u8> {
    let mut b = nr.to_le_bytes().to_vec();
    b.extend_from_slice(&ret.to_le_bytes());
    record(22, 77, &b)
}

fn irq_entry(irq: i32, name: &str) -> Vec<u8> {
    // irq @8, __data_loc name @12, string @16.
    let mut b = irq.to_le_bytes().to_vec();
    let n = name.len() as u32 + 1;
    b.extend_from_slice(&((n << 16) | 16).to_le_bytes());
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    record(30, 0, &b)
}

#[test]
fn pages_to_lttng_ctf_and_back() {
    let layout = parse_header_page(HEADER_PAGE).unwrap();
    let enter = parse_format(&format(
        "sys_enter",
        21,
        "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;
\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;",
    ))
    .unwrap();
    let exit = parse_format(&format(
        "sys_exit",
        22,
        "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;
\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;",
    ))
    .unwrap();
    let irq = parse_format(&format(
        "irq_handler_entry",
        30,
        "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;
\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;",
    ))
    .unwrap();
    let getpid = parse_format(&format("sys_enter_getpid", 500, "")).unwrap();
    let read = parse_format(&format(
        "sys_enter_read",
        501,
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;
\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;
\tfield:char * buf;\toffset:24;\tsize:8;\tsigned:0;
\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;",
    ))
    .unwrap();
    let defs = vec![
        syscall_def(0, "read", &read),
        syscall_def(39, "getpid", &getpid),
    ];
    let sel = select_events(&["syscalls".into(), "irq_handler_entry".into()]).unwrap();
    let known: Vec<_> = sel
        .into_iter()
        .map(|k| {
            let f = match k.event {
                "sys_enter" => enter.clone(),
                "sys_exit" => exit.clone(),
                "irq_handler_entry" => irq.clone(),
                e => panic!("unexpected {e}"),
            };
            (k, f)
        })
        .collect();

    let host = kernel::lttng::HostInfo {
        hostname: "pipeline".into(),
        trace_uuid: [7; 16],
        clock_uuid: [8; 16],
        clock_offset_ns: 1_700_000_000_000_000_000,
        creation: "20240101T000000+0000".into(),
        trace_name: "kernel".into(),
        kernel_release: "6.18".into(),
    };
    let mut tc = kernel::lttng::trace_class(
        &host,
        kernel::lttng::NetLayout::NetworkHeader,
        EventHeaderKind::Compact,
    );
    let mut conv = Converter::new(&mut tc, &known, &defs).unwrap();

    // CPU 0: getpid ×30 (enter/exit pairs) and a read; CPU 1: an IRQ after lost events.
    let mut b = PageBuilder::new(layout, 1_000);
    let mut ts = 1_000;
    for _ in 0..30 {
        ts += 150;
        b = b.record(ts, &sys_enter(39, [0; 6]), false);
        ts += 80;
        b = b.record(ts, &sys_exit(39, 77), false);
    }
    ts += 1 << 28; // needs a time-extend entry
    b = b.record(ts, &sys_enter(0, [3, 0xdead, 64, 0, 0, 0]), false);
    b = b.record(ts + 10, &sys_exit(0, 12), false);
    b = b.record(ts + 20, &sys_enter(1000, [1, 2, 3, 4, 5, 6]), false);
    let page0 = b.build();
    let page1 = PageBuilder::new(layout, 5_000)
        .missed(Some(5))
        .record(5_100, &irq_entry(36, "virtio1-req.0"), true)
        .build();

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kernel");
    let mut w = TraceWriter::create(&dir, &tc, 2, &WriterOptions::default()).unwrap();
    let snap = ProcSnapshot {
        threads: vec![ThreadState {
            tid: 77,
            pid: 77,
            ppid: 1,
            name: "app".into(),
            kernel: false,
            state: 'R',
            cpu: 0,
        }],
        fds: vec![],
        block_devices: vec![],
        interrupts: vec![],
        cpus: vec![],
    };
    for (id, vals) in snap.events() {
        w.write_event(0, id, 1_000, &vals).unwrap();
    }
    let mut vals: Vec<Value> = Vec::new();
    for (cpu, page) in [(0u32, &page0), (1, &page1)] {
        let mut events = Vec::new();
        let info = decode_page(&layout, page, |ts, rec| {
            if let Some(id) = conv.convert(rec, &mut vals) {
                events.push((ts, id, vals.clone()));
            }
        })
        .unwrap();
        if let Some(n) = info.missed_count {
            w.add_discarded(cpu, n).unwrap();
        }
        for (ts, id, v) in events {
            w.write_event(cpu, id, ts, &v).unwrap();
        }
    }
    assert_eq!(conv.stats.unknown_syscalls, 1);
    let stats = w.finish().unwrap();
    assert_eq!(stats.events, 3 + 60 + 3 + 1);

    // Read back.
    let traces = ctf::open_all(&[&dir]).unwrap();
    assert_eq!(traces[0].hostname(), Some("pipeline"));
    let mut names = std::collections::BTreeMap::new();
    let mut discarded = 0;
    let mut read_exit = None;
    let mut irq_name = None;
    for mut r in traces[0].readers() {
        while let Some(m) = r.next() {
            if let ctf::Message::Event = m.unwrap() {
                let ev = r.event();
                let name = ev.name().to_string();
                if name == "syscall_exit_read" {
                    read_exit = Some((
                        ev.field("ret").unwrap().as_i64().unwrap(),
                        ev.field("buf").unwrap().as_u64().unwrap(),
                    ));
                }
                if name == "irq_handler_entry" {
                    irq_name = ev.field("name").unwrap().as_str().map(|s| s.into_owned());
                }
                *names.entry(name).or_insert(0u64) += 1;
            }
        }
        discarded += r.discarded_so_far();
    }
    assert_eq!(names["syscall_entry_getpid"], 30);
    assert_eq!(names["syscall_exit_getpid"], 30);
    assert_eq!(names["syscall_entry_read"], 1);
    assert_eq!(names["syscall_entry_unknown"], 1);
    assert_eq!(names["lttng_statedump_process_state"], 1);
    assert_eq!(read_exit, Some((12, 0xdead)));
    assert_eq!(irq_name.as_deref(), Some("virtio1-req.0"));
    assert_eq!(discarded, 5);
}
