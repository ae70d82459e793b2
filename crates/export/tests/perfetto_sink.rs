//! The Perfetto sink through the library API, on arbitrary traces: whatever a trace says, the
//! output is a `Trace` whose every packet decodes, holding what the report counts. (Perfetto's
//! own bindings check the format itself: crates/tracekit/tests/perfetto.rs.)

#![cfg(feature = "perfetto")]

use std::collections::BTreeMap;

use export::perfetto::proto::{self, Data, Event};
use export::perfetto::{PerfettoOptions, PerfettoSink, Written};
use pipeline::{FileSource, ReadOptions, Source};
use proptest::prelude::*;
use prost::Message;
use scenario::chaos::{write_chaos_trace, ChaosOptions};
use scenario::rng::Rng;

/// Perfetto's name of a decoded event's kind.
fn name(e: &Event) -> &'static str {
    match e {
        Event::SchedSwitch(_) => "sched_switch",
        Event::SchedWakeup(_) => "sched_wakeup",
        Event::SchedWaking(_) => "sched_waking",
        Event::SchedWakeupNew(_) => "sched_wakeup_new",
        Event::SoftirqEntry(_) => "softirq_entry",
        Event::SoftirqExit(_) => "softirq_exit",
        Event::SoftirqRaise(_) => "softirq_raise",
        Event::IrqHandlerEntry(_) => "irq_handler_entry",
        Event::IrqHandlerExit(_) => "irq_handler_exit",
        Event::TaskNewtask(_) => "task_newtask",
        Event::SchedProcessExec(_) => "sched_process_exec",
        Event::SchedProcessExit(_) => "sched_process_exit",
        Event::SchedProcessFork(_) => "sched_process_fork",
        Event::SchedProcessFree(_) => "sched_process_free",
        Event::SysEnter(_) => "sys_enter",
        Event::SysExit(_) => "sys_exit",
    }
}

/// Exports the chaos trace of `seed` and checks the output against the report; returns the
/// number of events written.
fn export_chaos(seed: u64, events: usize) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let written = write_chaos_trace(&dir, &mut Rng::new(seed), &ChaosOptions::events(events))
        .expect("chaos trace written");
    let source = FileSource::open(
        &[&dir],
        ReadOptions {
            no_intersection: true,
            ..Default::default()
        },
    )
    .expect("trace opens");
    let file = tmp.path().join("out.pftrace");
    let sink = PerfettoSink::new(source.traces(), PerfettoOptions { file: file.clone() }).unwrap();
    let report = match export::export(&source, sink) {
        Ok((report, _)) => report,
        // A trace may hold no event Perfetto has a counterpart for.
        Err(export::Error::NothingKept) => return 0,
        Err(e) => panic!("seed {seed}: {e}"),
    };
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len() as u64, report.bytes, "seed {seed}");
    let trace = proto::Trace::decode(bytes.as_slice()).expect("the output decodes");
    assert_eq!(trace.packet.len() as u64, report.packets, "seed {seed}");
    let mut got: BTreeMap<&str, u64> = BTreeMap::new();
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    for p in &trace.packet {
        match &p.data {
            Some(Data::FtraceEvents(b)) => {
                let cpu = b.cpu.expect("a bundle names its CPU");
                assert!(cpu < written.cpus, "seed {seed}: CPU {cpu}");
                for e in &b.event {
                    *got.entry(name(e.event.as_ref().expect("a kind")))
                        .or_default() += 1;
                    let ts = e.timestamp.expect("a time");
                    let l = last.entry(cpu).or_default();
                    assert!(ts >= *l, "seed {seed}: CPU {cpu} goes back in time");
                    *l = ts;
                }
            }
            Some(Data::ProcessTree(t)) => {
                *got.entry("process_tree.threads").or_default() += t.threads.len() as u64;
            }
            Some(Data::ClockSnapshot(_) | Data::SystemInfo(_)) => {}
            None => panic!("seed {seed}: a packet without data"),
        }
    }
    let expected: BTreeMap<&str, u64> = report
        .counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(w, n)| (w.name(), *n))
        .collect();
    assert_eq!(got, expected, "seed {seed}");
    let forks = report.counts[Written::SchedProcessFork as usize].1;
    assert_eq!(report.counts[Written::TaskNewtask as usize].1, forks);
    report.exported
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any generated trace exports to protobuf that decodes into what the report says.
    #[test]
    fn any_trace_exports_to_decodable_protobuf(seed in any::<u64>()) {
        export_chaos(seed, 2000);
    }
}

/// The chaos traces do hold events Perfetto has a counterpart for (the property is not met by
/// writing nothing).
#[test]
fn chaos_traces_export_events() {
    let n: u64 = (0..4).map(|s| export_chaos(s, 2000)).sum();
    assert!(n > 1000, "{n} events written");
}
