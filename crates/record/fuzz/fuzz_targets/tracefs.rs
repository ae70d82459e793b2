//! What the recorder reads from the kernel, from any bytes: ring-buffer pages decoded and
//! their records converted to LTTng events with the formats of a real kernel (`events/`, a
//! copy of a 6.18 tracefs), and the text parsers (`format`, `header_page`, /proc files) and
//! the network header parser on the same bytes. No panic.

#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use ctf::writer::EventHeaderKind;
use libfuzzer_sys::fuzz_target;
use record::convert::{select_events, syscall_def, Converter, KnownEvent, SyscallDef};
use record::format::{parse_format, parse_header_page, EventFormat, PageLayout};
use record::page::decode_page;
use record::{netheader, statedump};

struct Kernel {
    layout: PageLayout,
    events: Vec<(KnownEvent, EventFormat)>,
    syscalls: Vec<SyscallDef>,
}

fn kernel() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("events");
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).expect("snapshot file");
        let layout = parse_header_page(&read("header_page")).expect("header_page");
        let events = select_events(&["all".to_string()])
            .expect("all events")
            .into_iter()
            .filter_map(|k| {
                let text = std::fs::read_to_string(dir.join(k.system).join(k.event).join("format"));
                Some((k, parse_format(&text.ok()?).ok()?))
            })
            .collect();
        let syscalls = record::syscall_table::X86_64
            .iter()
            .filter_map(|&(nr, name)| {
                let p = dir.join("syscalls").join(format!("sys_enter_{name}")).join("format");
                let f = parse_format(&std::fs::read_to_string(p).ok()?).ok()?;
                Some(syscall_def(nr, name, &f))
            })
            .collect();
        Kernel {
            layout,
            events,
            syscalls,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let k = kernel();
    let host = kernel::lttng::HostInfo {
        hostname: "fuzz".into(),
        trace_uuid: [1; 16],
        clock_uuid: [2; 16],
        clock_offset_ns: 0,
        creation: "20240101T000000+0000".into(),
        trace_name: "kernel".into(),
        kernel_release: "6.18".into(),
    };
    let mut tc = kernel::lttng::trace_class(
        &host,
        kernel::lttng::NetLayout::NetworkHeader,
        EventHeaderKind::Compact,
    );
    let mut conv = Converter::new(&mut tc, &k.events, &k.syscalls).expect("converter");
    let mut out = Vec::new();
    // The bytes as pages of the ring buffer, each record converted.
    for page in data.chunks(k.layout.page_size().max(1)) {
        let _ = decode_page(&k.layout, page, |_, rec| {
            conv.convert(rec, &mut out);
        });
    }
    // The same bytes as the text of the files the recorder parses.
    let text = String::from_utf8_lossy(data);
    let _ = parse_format(&text);
    let _ = parse_header_page(&text);
    statedump::parse_interrupts(&text);
    statedump::parse_cpuinfo(&text);
    statedump::parse_partitions(&text);
    statedump::parse_fdinfo_flags(&text);
    for line in text.lines() {
        statedump::parse_stat(line);
    }
    netheader::parse_network_header(data);
});
